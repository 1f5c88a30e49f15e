package function

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/configdata"
)

// apply binds and runs one invocation over data and returns the rendered data and the output.
func apply(t *testing.T, toolchain, data string, inv Invocation) (string, any) {
	t.Helper()
	c, err := Bind(toolchain, inv, "FunctionInvocations.0")
	require.NoError(t, err)
	tree, err := configdata.Open(toolchain, []byte(data))
	require.NoError(t, err)
	out, err := c.Run(tree)
	require.NoError(t, err)
	rendered, err := tree.Render()
	require.NoError(t, err)
	_, err = configdata.Parse(toolchain, rendered)
	require.NoError(t, err, "rendered data must parse: %s", rendered)
	return string(rendered), out
}

func args(vs ...any) []Argument {
	out := make([]Argument, len(vs))
	for i, v := range vs {
		out[i] = Argument{Value: v}
	}
	return out
}

func TestSetAndGetOnEveryFormat(t *testing.T) {
	cases := map[string]struct{ data, path, want string }{
		configdata.AppConfigYAML:       {"# comment\nserver:\n  port: 80 # the port\n  host: a\n", "server.port", "# comment\nserver:\n  port: 8080 # the port\n  host: a\n"},
		configdata.AppConfigJSON:       {`{"server": {"port": 80, "host": "a"}}`, "server.port", "{\n  \"server\": {\n    \"port\": 8080,\n    \"host\": \"a\"\n  }\n}\n"},
		configdata.AppConfigTOML:       {"[server]\nport = 80\nhost = 'a'\n", "server.port", ""},
		configdata.AppConfigINI:        {"[server]\nport = 80\nhost = a\n", "server.port", "[server]\nhost = a\nport = 8080\n"},
		configdata.AppConfigProperties: {"server.port=80\nserver.host=a\n", "server.port", "server.host = a\nserver.port = 8080\n"},
		configdata.AppConfigEnv:        {"PORT=80\nHOST=a\n", "PORT", "HOST=a\nPORT=8080\n"},
	}
	for toolchain, tc := range cases {
		t.Run(toolchain, func(t *testing.T) {
			out, _ := apply(t, toolchain, tc.data, Invocation{FunctionName: "set-value", Arguments: args(tc.path, int64(8080))})
			if tc.want != "" {
				require.Equal(t, tc.want, out)
			}
			_, got := apply(t, toolchain, out, Invocation{FunctionName: "get-value", Arguments: args(tc.path)})
			vals := got.([]Value)
			require.Len(t, vals, 1)
			require.Contains(t, []any{int64(8080), "8080"}, vals[0].Value)
		})
	}
}

func TestKubernetesFunctions(t *testing.T) {
	const deploy = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  template:
    spec:
      containers:
        - name: main
          image: nginx:1.0
        - name: side
          image: envoy:1.0
---
apiVersion: v1
kind: Namespace
metadata:
  name: shop
`
	out, _ := apply(t, configdata.KubernetesYAML, deploy, Invocation{FunctionName: "set-image", Arguments: args("main", "nginx:2.0")})
	require.Contains(t, out, "image: nginx:2.0")
	require.Contains(t, out, "image: envoy:1.0")
	_, imgs := apply(t, configdata.KubernetesYAML, out, Invocation{FunctionName: "get-image", Arguments: args("*")})
	require.Len(t, imgs.([]Value), 2)
	out, _ = apply(t, configdata.KubernetesYAML, out, Invocation{FunctionName: "set-namespace", Arguments: args("prod")})
	require.Contains(t, out, "namespace: prod")
	require.NotContains(t, out, "name: shop\n  namespace")
	out, _ = apply(t, configdata.KubernetesYAML, out, Invocation{FunctionName: "set-env", Arguments: args("main", "LOG", "debug")})
	require.Contains(t, out, "name: LOG")
	_, v := apply(t, configdata.KubernetesYAML, out, Invocation{FunctionName: "no-placeholders"})
	require.True(t, v.(Validation).Passed)
}
