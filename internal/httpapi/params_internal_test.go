package httpapi

import (
	"context"
	"testing"

	"github.com/google/uuid"
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

// TestListParamsCarryResolvedReferences: listParams hands the list the Filter and View the contract
// middleware resolved for the request, and none when it resolved none.
func TestListParamsCarryResolvedReferences(t *testing.T) {
	ref := "dev/big"
	f := &listquery.FilterDefinition{ID: uuid.New(), From: "Unit"}
	v := &listquery.ViewDefinition{ID: uuid.New(), Of: "Unit"}
	ctx := context.WithValue(context.Background(), listReferencesKey{}, listReferences{filter: f, view: v})
	got := listParams(ctx, api.ListUnitsParams{Filter: &ref, View: &ref})
	assert.Equal(t, listquery.Params{Filter: ref, View: ref, FilterDefinition: f, ViewDefinition: v}, got)
	assert.Equal(t, listquery.Params{Filter: ref}, listParams(context.Background(), api.ListUnitsParams{Filter: &ref}))
}
