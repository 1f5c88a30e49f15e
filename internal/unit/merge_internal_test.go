package unit

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestReplaceSourceConflicts: a merge replaces the outstanding conflicts of its own source (upstream Unit
// and Link) and keeps the others'.
func TestReplaceSourceConflicts(t *testing.T) {
	up, other, link := uuid.New(), uuid.New(), uuid.New()
	current := []Conflict{
		{Path: "a", MergeSourceID: &up},
		{Path: "b", MergeSourceID: &up, LinkID: &link},
		{Path: "c", MergeSourceID: &other},
		{Path: "d"}, // a function's: no source
	}
	paths := func(cs []Conflict) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Path)
		}
		return out
	}
	require.Equal(t, []string{"b", "c", "d", "n"}, paths(replaceSourceConflicts(current, up, nil, []Conflict{{Path: "n", MergeSourceID: &up}})))
	require.Equal(t, []string{"a", "c", "d"}, paths(replaceSourceConflicts(current, up, &link, nil)))
	require.Equal(t, []string{"a", "b", "d"}, paths(replaceSourceConflicts(current, other, nil, nil)))
}
