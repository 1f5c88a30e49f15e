package listquery

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
)

var testOrganization = uuid.New()

// planOf plans a list of testEntity in testOrganization with params, as Run would before reading.
func planOf(t *testing.T, params Params) (*plan, error) {
	t.Helper()
	q := Query{Entity: testEntity, Caller: authz.SystemScope(testOrganization, "test"), Path: "/thing", Params: params}
	p, _, err := q.plan(NewTokenCodec([]byte("key")))
	return p, err
}

func requireValidation(t *testing.T, err error, message string) {
	t.Helper()
	require.Error(t, err)
	e := apierr.From(err)
	assert.Equal(t, apierr.TypeValidation, e.Type)
	assert.Equal(t, message, e.Message)
}

// TestFilterAndViewTravelInParams: the Filter and View a list applies are the definitions its Params carry;
// one named without its definition is refused, and one of another entity type too.
func TestFilterAndViewTravelInParams(t *testing.T) {
	filterID, viewID := uuid.New(), uuid.New()
	countOver := &FilterDefinition{ID: filterID, From: "Thing", Hash: "h1", Where: "Count > 3", IncludeHidden: "*"}

	_, err := planOf(t, Params{Filter: "big"})
	requireValidation(t, err, `filter: no Filter "big" in your organization`)
	_, err = planOf(t, Params{View: "wide"})
	requireValidation(t, err, `view: no View "wide" in your organization`)

	p, err := planOf(t, Params{Filter: "big", FilterDefinition: countOver, Where: "Enabled = true"})
	require.NoError(t, err)
	require.NotNil(t, p.where)
	assert.Contains(t, p.where.SQL, "thing.count")
	assert.Contains(t, p.where.SQL, "thing.enabled")
	assert.Equal(t, []string{"*"}, p.hidden, "the Filter's IncludeHidden applies when the request names none")

	// A definition is in force without a name: a caller selecting by a stored Filter itself.
	p, err = planOf(t, Params{FilterDefinition: countOver})
	require.NoError(t, err)
	assert.Contains(t, p.where.SQL, "thing.count")

	_, err = planOf(t, Params{Filter: "spaces", FilterDefinition: &FilterDefinition{ID: filterID, From: "Space"}})
	requireValidation(t, err, "filter: Filter "+filterID.String()+" selects Space, not Thing")

	columns := []ViewColumnSource{{Name: "Count", MetadataAttribute: "Count"}}
	p, err = planOf(t, Params{View: "wide", ViewDefinition: &ViewDefinition{ID: viewID, Of: "Thing", Hash: "v1", Columns: columns, Filter: countOver}})
	require.NoError(t, err)
	require.NotNil(t, p.view)
	assert.Same(t, countOver, p.filter, "a View's Filter is in force with it")

	_, err = planOf(t, Params{View: "wide", ViewDefinition: &ViewDefinition{ID: viewID, Of: "Space", Columns: columns}})
	requireValidation(t, err, "view: View "+viewID.String()+" is of Space, not Thing")
	_, err = planOf(t, Params{Filter: "big", FilterDefinition: countOver,
		View: "wide", ViewDefinition: &ViewDefinition{ID: viewID, Of: "Thing", Columns: columns, Filter: countOver}})
	requireValidation(t, err, "view: View "+viewID.String()+" has its own Filter; it cannot be combined with filter=")
}

// TestContinueIsBoundToDefinitions: a continue token belongs to the Filter's and the View's definitions as
// they were, so a changed one ends the pages of the old.
func TestContinueIsBoundToDefinitions(t *testing.T) {
	columns := []ViewColumnSource{{Name: "Count", MetadataAttribute: "Count"}}
	signature := func(filterHash, viewHash string) string {
		p, err := planOf(t, Params{Filter: "big", FilterDefinition: &FilterDefinition{From: "Thing", Hash: filterHash},
			View: "wide", ViewDefinition: &ViewDefinition{Of: "Thing", Hash: viewHash, Columns: columns}})
		require.NoError(t, err)
		return p.signature
	}
	base := signature("f1", "v1")
	assert.Equal(t, base, signature("f1", "v1"))
	assert.NotEqual(t, base, signature("f2", "v1"))
	assert.NotEqual(t, base, signature("f1", "v2"))
}
