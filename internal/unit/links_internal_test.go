package unit

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/function"
)

func mustDoc(t *testing.T, toolchain, data string) *configdata.Document {
	t.Helper()
	d, err := configdata.Parse(toolchain, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestWriteLinkPaths(t *testing.T) {
	upstream := mustDoc(t, configdata.KubernetesYAML, "apiVersion: v1\nkind: Service\nmetadata:\n  name: db\n  namespace: data\nspec:\n  ports:\n  - name: pg\n    port: 5432\n")
	const downData = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app # the app\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        env:\n        - name: DB_PORT\n          value: '1'\n"
	spec := linkSpec{id: uuid.New(), slug: "db",
		up: []configdata.NamedPath{{ResourceType: "v1/Service", Path: "spec.ports.?name=pg.port"}, {Name: "ns", Path: "metadata.namespace"}, {Name: "missing", Path: "spec.nothing"}},
		down: []configdata.PathExpression{
			{ResourceType: "apps/v1/Deployment", Path: "spec.template.spec.containers.?name=app.env.?name=DB_PORT.value"},
			{Name: "ns", ResourceType: "apps/v1/Deployment", ResourceName: "app", Path: "metadata.annotations.db-namespace"},
			{Name: "missing", ResourceType: "apps/v1/Deployment", Path: "metadata.labels.x", Required: true},
		}}
	cases := []struct {
		name       string
		notes      annotations
		clearance  []function.Requirement
		statuses   []string
		conflicts  int
		wantInData []string
	}{
		{name: "written", statuses: []string{FindingWritten, FindingWritten, FindingNotProvided},
			wantInData: []string{"value: 5432", "db-namespace: data", "# the app"}},
		{name: "protected", notes: annotations{{ResourceType: "apps/v1/Deployment", ResourceName: "app", Path: "metadata.annotations", Protected: true}},
			statuses: []string{FindingWritten, FindingWithheld, FindingNotProvided}, conflicts: 1, wantInData: []string{"value: 5432"}},
		{name: "guarded", notes: annotations{{ResourceType: "apps/v1/Deployment", ResourceName: "app", Path: "spec", Guards: map[string]string{"owner": "ops"}}},
			statuses: []string{FindingWithheld, FindingWritten, FindingNotProvided}, conflicts: 1, wantInData: []string{`value: "1"`}},
		{name: "cleared", notes: annotations{{ResourceType: "apps/v1/Deployment", ResourceName: "app", Path: "spec", Guards: map[string]string{"owner": "ops"}}},
			clearance: []function.Requirement{{Key: "owner", Operator: "In", Values: []string{"ops"}}},
			statuses:  []string{FindingWritten, FindingWritten, FindingNotProvided}, wantInData: []string{"value: 5432"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tree, err := configdata.Open(configdata.KubernetesYAML, []byte(downData))
			if err != nil {
				t.Fatal(err)
			}
			before, _ := tree.Document()
			s := spec
			s.clearance = c.clearance
			findings, conflicts, _, err := writeLinkPaths(tree, before, upstream, s, c.notes)
			if err != nil {
				t.Fatal(err)
			}
			for i, f := range findings {
				if f.Status != c.statuses[i] {
					t.Errorf("finding %d: status %s (%s), want %s", i, f.Status, f.Details, c.statuses[i])
				}
			}
			if len(conflicts) != c.conflicts {
				t.Errorf("conflicts %+v, want %d", conflicts, c.conflicts)
			}
			out, err := tree.Render()
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.wantInData {
				if !strings.Contains(string(out), w) {
					t.Errorf("data lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestUpstreamValueAmbiguous(t *testing.T) {
	doc := mustDoc(t, configdata.AppConfigYAML, "a:\n- x: 1\n- x: 2\n")
	if _, status, _ := upstreamValue(doc, configdata.NamedPath{Path: "a.*.x"}); status != FindingAmbiguous {
		t.Fatalf("status %s, want %s", status, FindingAmbiguous)
	}
	doc = mustDoc(t, configdata.AppConfigYAML, "a:\n- x: 1\n- x: 1\n")
	if v, status, _ := upstreamValue(doc, configdata.NamedPath{Path: "a.*.x"}); status != "" || encode(v) != "1" {
		t.Fatalf("value %v status %s, want 1", v, status)
	}
}
