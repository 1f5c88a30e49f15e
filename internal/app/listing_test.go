package app

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/listquery"
)

var update = flag.Bool("update", false, "rewrite testdata/listing.golden from the registry")

// TestListingsUnchanged guards what clients see of every list: the names where, order_by, select and include
// accept, in the order error messages list them, and the SQL each stands for. A change to a family's
// listquery.Entity must show here; run with -update and review the diff of testdata/listing.golden.
func TestListingsUnchanged(t *testing.T) {
	var b strings.Builder
	for _, name := range listquery.Names() {
		dumpEntity(&b, "", listquery.Lookup(name))
	}
	const golden = "testdata/listing.golden"
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	wantLines, gotLines := strings.Split(string(want), "\n"), strings.Split(b.String(), "\n")
	for i := range max(len(wantLines), len(gotLines)) {
		if i >= len(wantLines) || i >= len(gotLines) || wantLines[i] != gotLines[i] {
			t.Fatalf("%s differs from the registry at line %d:\nwant: %q\ngot:  %q\n(run with -update and review the diff)",
				golden, i+1, lineAt(wantLines, i), lineAt(gotLines, i))
		}
	}
}

func lineAt(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(end)"
}

func dumpEntity(b *strings.Builder, indent string, e *listquery.Entity) {
	fmt.Fprintf(b, "%sentity %s\n", indent, e.Name)
	// What contains matches is a set: select adds each of them.
	contains := slices.Sorted(slices.Values(e.ContainsAttrs))
	for _, kv := range [][2]string{{"From", e.From}, {"Columns", e.Columns}, {"ID", e.ID}, {"Org", e.Org}, {"Slug", e.Slug},
		{"Contains", e.Contains}, {"ContainsAttrs", strings.Join(contains, ", ")}, {"HiddenReason", e.HiddenReason},
		{"DataColumn", e.DataColumn}} {
		if kv[1] != "" {
			fmt.Fprintf(b, "%s  %s: %s\n", indent, kv[0], kv[1])
		}
	}
	if v := e.Visibility; v != nil {
		fmt.Fprintf(b, "%s  Visibility: grants=%q space=%q spacePermissions=%v members=%q owner=%+v\n", indent, v.Grants, v.Space, v.SpacePermissions, v.Members, v.Owner)
	}
	for _, a := range e.Attributes {
		fmt.Fprintf(b, "%s  attr %s %s sql=%q", indent, a.Name, a.Type, a.SQL)
		for _, f := range []struct {
			set  bool
			name string
		}{{a.Nullable, "nullable"}, {a.Filterable, "filterable"}, {a.Orderable, "orderable"}, {a.Always, "always"}} {
			if f.set {
				b.WriteString(" " + f.name)
			}
		}
		if a.OrderSQL != "" {
			fmt.Fprintf(b, " order=%q", a.OrderSQL)
		}
		b.WriteString("\n")
		if a.Elem != nil {
			dumpEntity(b, indent+"    ", a.Elem)
		}
	}
	for _, in := range e.Includes {
		fmt.Fprintf(b, "%s  include %s -> %s (%s)\n", indent, in.Name, in.Field, in.EntityType())
	}
}
