package configdata_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/configdata"
)

func compare(t *testing.T, toolchain, from, to string) configdata.Diff {
	t.Helper()
	var fromDoc, toDoc *configdata.Document
	var err error
	if from != "" {
		fromDoc, err = configdata.Parse(toolchain, []byte(from))
		require.NoError(t, err)
	}
	if to != "" {
		toDoc, err = configdata.Parse(toolchain, []byte(to))
		require.NoError(t, err)
	}
	return configdata.Compare([]byte(from), []byte(to), fromDoc, toDoc)
}

// TestCompare: the changed paths of two versions, each Added, Removed or Changed with its old and new
// value, ordered by resource and path, beside a unified diff of the text.
func TestCompare(t *testing.T) {
	t.Parallel()
	d := compare(t, configdata.AppConfigYAML,
		"port: 80\nhost: a\nlist: [1, 2]\nsame: x\nnum: 1\n",
		"port: 8080\nlist: [1]\nsame: x\nnum: '1'\nnew: {}\n")
	require.Equal(t, []configdata.Change{
		{Path: "host", Change: configdata.Removed, Old: "a"},
		{Path: "list.1", Change: configdata.Removed, Old: int64(2)},
		{Path: "new", Change: configdata.Added, New: map[string]any{}},
		{Path: "num", Change: configdata.Changed, Old: int64(1), New: "1"},
		{Path: "port", Change: configdata.Changed, Old: int64(80), New: int64(8080)},
	}, d.Changes)
	require.Contains(t, d.Unified, "--- from\n+++ to\n")
	require.Contains(t, d.Unified, "-port: 80\n-host: a\n")
	require.Contains(t, d.Unified, "+port: 8080\n")
	require.NotContains(t, d.Unified, "-same: x", "an unchanged line is context")

	same := compare(t, configdata.AppConfigEnv, "A=1\n", "A=1\n")
	require.NotNil(t, same.Changes, "no change is an empty list, not null")
	require.Empty(t, same.Changes)
	require.Empty(t, same.Unified)

	// A reformatting that keeps every value changes no path.
	require.Empty(t, compare(t, configdata.AppConfigJSON, `{"a": 1, "b": [true]}`, "{\n  \"b\": [ true ],\n  \"a\": 1\n}\n").Changes)

	first := compare(t, configdata.AppConfigProperties, "", "a=1\nb.c=2\n")
	require.Equal(t, []configdata.Change{
		{Path: "a", Change: configdata.Added, New: "1"},
		{Path: "b.c", Change: configdata.Added, New: "2"},
	}, first.Changes, "from nothing, everything is Added")
	require.Contains(t, first.Unified, "+a=1\n+b.c=2\n")
}

// TestCompareKubernetesResources: the changes of Kubernetes data name their resources, and a resource
// renamed (its namespace changed) is the old one removed and a new one added.
func TestCompareKubernetesResources(t *testing.T) {
	t.Parallel()
	const svc = "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"
	d := compare(t, configdata.KubernetesYAML,
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  k: a\n"+svc,
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: prod\ndata:\n  k: a\n"+svc+"spec:\n  port: 80\n")
	type named struct{ typ, name, path, change string }
	var got []named
	for _, c := range d.Changes {
		got = append(got, named{c.ResourceType, c.ResourceName, c.Path, c.Change})
	}
	require.Equal(t, []named{
		{"v1/ConfigMap", "cfg", "apiVersion", configdata.Removed},
		{"v1/ConfigMap", "cfg", "data.k", configdata.Removed},
		{"v1/ConfigMap", "cfg", "kind", configdata.Removed},
		{"v1/ConfigMap", "cfg", "metadata.name", configdata.Removed},
		{"v1/ConfigMap", "prod/cfg", "apiVersion", configdata.Added},
		{"v1/ConfigMap", "prod/cfg", "data.k", configdata.Added},
		{"v1/ConfigMap", "prod/cfg", "kind", configdata.Added},
		{"v1/ConfigMap", "prod/cfg", "metadata.name", configdata.Added},
		{"v1/ConfigMap", "prod/cfg", "metadata.namespace", configdata.Added},
		{"v1/Service", "web", "spec.port", configdata.Added},
	}, got)
}
