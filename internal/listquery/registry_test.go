package listquery

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLookup(t *testing.T) {
	require.Same(t, testEntity, Lookup("Thing"))
	require.Contains(t, Names(), "Thing")
	// Nested element entities are described under their attribute, not registered (testEntity has two
	// called Argument, which is fine).
	require.Nil(t, Lookup("Argument"))
	require.Nil(t, Lookup("Invocation"))
	require.Nil(t, Lookup("Nothing"))

	require.Equal(t, []string{"ThingID", "Slug", "Count", "Enabled", "CreatedAt"}, testEntity.OrderFields())
	require.Empty(t, testEntity.IncludeNames())
	require.False(t, testEntity.SupportsContains())
}

func TestDefineRefusesADuplicateName(t *testing.T) {
	require.PanicsWithValue(t, "listquery: entity Thing is defined twice", func() {
		Define(&Entity{Name: "Thing", ID: "ThingID", Attributes: []Attribute{{Name: "ThingID", Type: UUID, SQL: "x"}}})
	})
	require.Same(t, testEntity, Lookup("Thing"), "the first definition stays")
}
