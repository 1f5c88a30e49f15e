package function

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hubd/hubd/internal/configdata"
)

// podSpecPaths says where each workload kind keeps its pod spec.
var podSpecPaths = map[string]string{
	"Pod": "spec", "Deployment": "spec.template.spec", "StatefulSet": "spec.template.spec", "DaemonSet": "spec.template.spec",
	"ReplicaSet": "spec.template.spec", "ReplicationController": "spec.template.spec", "Job": "spec.template.spec",
	"CronJob": "spec.jobTemplate.spec.template.spec",
}

// replicated kinds take spec.replicas.
var replicated = map[string]bool{"Deployment": true, "StatefulSet": true, "ReplicaSet": true, "ReplicationController": true}

// clusterScoped kinds have no namespace.
var clusterScoped = map[string]bool{
	"Namespace": true, "Node": true, "PersistentVolume": true, "StorageClass": true, "ClusterRole": true, "ClusterRoleBinding": true,
	"CustomResourceDefinition": true, "PriorityClass": true, "IngressClass": true, "RuntimeClass": true, "APIService": true,
	"MutatingWebhookConfiguration": true, "ValidatingWebhookConfiguration": true, "CSIDriver": true, "VolumeSnapshotClass": true,
}

func kindOf(r *configdata.TreeResource) string {
	typ, _ := r.Identity(configdata.KubernetesYAML)
	return typ[strings.LastIndex(typ, "/")+1:]
}

// containers are the containers (and init containers) named name (* for all) of the selected workloads.
func (x *call) containers(name string) []configdata.Located {
	var out []configdata.Located
	for _, r := range x.resources {
		at, ok := podSpecPaths[kindOf(r)]
		if !ok {
			continue
		}
		specPath, _ := ParsePath(at)
		for _, spec := range configdata.Find(r.Root, specPath) {
			for _, list := range []string{"initContainers", "containers"} {
				sel := configdata.PathSegment{Match: true, MatchKey: "name", MatchValue: name}
				if name == "*" {
					sel = configdata.PathSegment{Star: true}
				}
				out = append(out, configdata.Find(spec.Node, []configdata.PathSegment{{Key: list}, sel})...)
			}
		}
	}
	return out
}

// metadataOf is each selected resource's metadata map, created when missing.
func (x *call) metadataOf(keep func(r *configdata.TreeResource) bool) []configdata.Located {
	var out []configdata.Located
	for _, r := range x.resources {
		if keep != nil && !keep(r) {
			continue
		}
		meta := configdata.Find(r.Root, []configdata.PathSegment{{Key: "metadata"}})
		if len(meta) == 0 {
			if _, err := configdata.Set(r.Root, []configdata.PathSegment{{Key: "metadata"}}, mapping()); err != nil {
				continue
			}
			meta = configdata.Find(r.Root, []configdata.PathSegment{{Key: "metadata"}})
		}
		out = append(out, meta...)
	}
	return out
}

func registerKubernetes() {
	k8s := configdata.KubernetesYAML
	mutating := func(name, description string, params []Parameter, run func(x *call) error) {
		register(&Function{Signature: Signature{
			FunctionName: name, Description: description, Parameters: params, OutputInfo: Output{OutputType: OutputNone},
			Mutating: true, Idempotent: true, Replayable: true,
		}, run: func(x *call) (any, error) { return nil, run(x) }}, k8s)
	}
	mutating("set-image", "Sets the image of the named containers of every selected workload",
		[]Parameter{containerParam, {ParameterName: "image", Description: "Image reference", DataType: TypeString, Required: true, Example: "nginx:1.27"}},
		func(x *call) error { return setIn(x.containers(x.str("container-name")), "image", x.str("image")) })
	register(&Function{Signature: Signature{
		FunctionName: "get-image", Description: "Reads the image of the named containers of every selected workload",
		Parameters: []Parameter{containerParam}, OutputInfo: Output{ResultName: "images", Description: "The images found", OutputType: OutputValues},
		Idempotent: true, AttributeName: "container-image",
	}, run: func(x *call) (any, error) {
		var out []Value
		for _, r := range x.resources {
			x := &call{Call: x.Call, tree: x.tree, resources: []*configdata.TreeResource{r}}
			typ, name := r.Identity(configdata.KubernetesYAML)
			for _, c := range x.containers(x.str("container-name")) {
				for _, img := range configdata.Find(c.Node, []configdata.PathSegment{{Key: "image"}}) {
					out = append(out, Value{ResourceType: typ, ResourceName: name, Path: podSpecPaths[kindOf(r)] + "." + c.Path + ".image", Value: img.Node.Value})
				}
			}
		}
		return nonNil(out), nil
	}}, k8s)
	mutating("set-replicas", "Sets spec.replicas of every selected Deployment, StatefulSet, ReplicaSet and ReplicationController",
		[]Parameter{{ParameterName: "replicas", Description: "Number of replicas", DataType: TypeInt, Required: true, Example: "3"}},
		func(x *call) error {
			n, _ := x.integer("replicas")
			if n < 0 {
				return &configdata.EditError{Msg: fmt.Sprintf("replicas must not be negative, not %d", n)}
			}
			for _, r := range x.resources {
				if replicated[kindOf(r)] {
					if err := setIn([]configdata.Located{{Node: r.Root}}, "spec.replicas", n); err != nil {
						return err
					}
				}
			}
			return nil
		})
	mutating("set-namespace", "Sets metadata.namespace of every selected namespaced resource",
		[]Parameter{{ParameterName: "namespace", Description: "Namespace", DataType: TypeString, Required: true, Example: "production"}},
		func(x *call) error {
			return setIn(x.metadataOf(func(r *configdata.TreeResource) bool { return !clusterScoped[kindOf(r)] }), "namespace", x.str("namespace"))
		})
	mutating("ensure-context", "Gives every selected namespaced resource without a namespace the namespace (default: default)",
		[]Parameter{{ParameterName: "namespace", Description: "Namespace for resources that have none", DataType: TypeString, Example: "default"}},
		func(x *call) error {
			ns := x.str("namespace")
			if ns == "" {
				ns = "default"
			}
			return setIn(x.metadataOf(func(r *configdata.TreeResource) bool {
				if clusterScoped[kindOf(r)] {
					return false
				}
				_, name := r.Identity(configdata.KubernetesYAML)
				return !strings.Contains(name, "/")
			}), "namespace", ns)
		})
	keyValue := func(what string) []Parameter {
		return []Parameter{
			{ParameterName: "key", Description: what + " key", DataType: TypeString, Required: true, Example: "app.kubernetes.io/part-of"},
			{ParameterName: "value", Description: what + " value", DataType: TypeString, Required: true, Example: "shop"},
		}
	}
	setMeta := func(field string) func(x *call) error {
		return func(x *call) error {
			n, _ := configdata.ValueNode(x.str("value"))
			for _, meta := range x.metadataOf(nil) {
				if _, err := configdata.Set(meta.Node, []configdata.PathSegment{{Key: field}, {Key: x.str("key")}}, n); err != nil {
					return err
				}
			}
			return nil
		}
	}
	mutating("set-label", "Sets a label in metadata.labels of every selected resource", keyValue("Label"), setMeta("labels"))
	mutating("set-annotation", "Sets an annotation in metadata.annotations of every selected resource", keyValue("Annotation"), setMeta("annotations"))
	mutating("set-env", "Sets an environment variable of the named containers, adding it when missing",
		[]Parameter{containerParam,
			{ParameterName: "name", Description: "Variable name", DataType: TypeString, Required: true, Example: "LOG_LEVEL"},
			{ParameterName: "value", Description: "Variable value", DataType: TypeString, Required: true, Example: "info"}},
		func(x *call) error {
			for _, c := range x.containers(x.str("container-name")) {
				env := configdata.Find(c.Node, []configdata.PathSegment{{Key: "env"}})
				if len(env) == 0 {
					if _, err := configdata.Set(c.Node, []configdata.PathSegment{{Key: "env"}}, &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}); err != nil {
						return err
					}
					env = configdata.Find(c.Node, []configdata.PathSegment{{Key: "env"}})
				}
				if env[0].Node.Kind != yaml.SequenceNode {
					return &configdata.EditError{Msg: c.Path + ".env is not a list"}
				}
				entry := configdata.Find(env[0].Node, []configdata.PathSegment{{Match: true, MatchKey: "name", MatchValue: x.str("name")}})
				if len(entry) > 0 {
					if err := setIn(entry, "value", x.str("value")); err != nil {
						return err
					}
					configdata.Delete(entry[0].Node, []configdata.PathSegment{{Key: "valueFrom"}})
					continue
				}
				n, _ := configdata.ValueNode(map[string]any{"name": x.str("name"), "value": x.str("value")})
				env[0].Node.Content = append(env[0].Node.Content, n)
			}
			return nil
		})
	quantity := func(name, description, example string) Parameter {
		return Parameter{ParameterName: name, Description: description + " (empty leaves it as it is)", DataType: TypeString, Example: example}
	}
	mutating("set-container-resources", "Sets resource requests and limits of the named containers",
		[]Parameter{containerParam, quantity("cpu-request", "CPU request", "250m"), quantity("memory-request", "Memory request", "256Mi"),
			quantity("cpu-limit", "CPU limit", "1"), quantity("memory-limit", "Memory limit", "512Mi")},
		func(x *call) error {
			containers := x.containers(x.str("container-name"))
			for _, pp := range [][2]string{{"cpu-request", "resources.requests.cpu"}, {"memory-request", "resources.requests.memory"},
				{"cpu-limit", "resources.limits.cpu"}, {"memory-limit", "resources.limits.memory"}} {
				param, path := pp[0], pp[1]
				if v := x.str(param); v != "" {
					if err := setIn(containers, path, v); err != nil {
						return err
					}
				}
			}
			return nil
		})
	register(&Function{Signature: Signature{
		FunctionName: "get-resources", Description: "Lists the selected resources",
		OutputInfo: Output{ResultName: "resources", Description: "ResourceType and ResourceName of each", OutputType: OutputResources}, Idempotent: true,
	}, run: func(x *call) (any, error) {
		out := []Path{}
		for _, r := range x.resources {
			typ, name := r.Identity(configdata.KubernetesYAML)
			out = append(out, Path{ResourceType: typ, ResourceName: name})
		}
		return out, nil
	}}, k8s)
}
