package httpapi

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/unit"
)

// TestParamsConversions: the generated conversions (params.gen.go) carry every list, copy and data
// parameter of a generated parameter struct to its own field, and an absent one as its zero value.
func TestParamsConversions(t *testing.T) {
	str := func(v string) *string { return &v }
	num := func(v int) *int { return &v }
	yes := true
	allowExists := api.BulkCreateUnitsParamsAllowExists("true")

	assert.Equal(t, listquery.Params{Where: "w", Filter: "f", Contains: "c", Include: "i", Select: "s", IncludeHidden: "h", View: "v",
		Limit: num(5), Continue: "k", OrderBy: "o", Offset: num(2)},
		listParamsOf(api.ListSpacesParams{Where: str("w"), Filter: str("f"), Contains: str("c"), Include: str("i"), Select: str("s"),
			IncludeHidden: str("h"), View: str("v"), Limit: num(5), Continue: str("k"), OrderBy: str("o"), Offset: num(2)}))
	assert.Equal(t, listquery.Params{}, listParamsOf(api.ListSpacesParams{}))
	assert.Equal(t, listquery.Params{Where: "w", Filter: "f", Contains: "c"},
		listParamsOf(api.BulkCreateUnitsParams{Where: str("w"), Filter: str("f"), Contains: str("c"), WhereSpace: str("ws")}))

	assert.Equal(t, copyParams{WhereSpace: str("ws"), FilterSpace: str("fs"), NamePrefixes: str("a-,b-"), AllowExists: str("true"), DryRun: &yes},
		copyParamsOf(api.BulkCreateUnitsParams{Where: str("w"), WhereSpace: str("ws"), FilterSpace: str("fs"), NamePrefixes: str("a-,b-"),
			AllowExists: &allowExists, DryRun: &yes}))

	assert.Equal(t, unit.DataFilter{WhereData: "spec.replicas > 1", ResourceType: "apps/v1/Deployment"},
		dataFilterOf(api.ListUnitsParams{WhereData: str("spec.replicas > 1"), ResourceType: str("apps/v1/Deployment"), Where: str("w")}))
}

// TestListParamsWithoutReferences: a request naming no Filter and no View reads none (the store is not
// asked); its list parameters are its parameter struct's, converted, with the server's View bounds.
func TestListParamsWithoutReferences(t *testing.T) {
	where := "Slug = 'a'"
	s := &Server{cfg: Config{ViewLimits: listquery.ViewLimits{CellValues: 7}}}
	got, err := listParams(context.Background(), s, nil, api.ListUnitsParams{Where: &where})
	assert.NoError(t, err)
	assert.Equal(t, listquery.Params{Where: where, ViewLimits: listquery.ViewLimits{CellValues: 7}}, got, "the server's View bounds ride along")
}
