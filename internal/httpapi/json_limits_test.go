package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/httpapi"
)

// TestJSONBodyLimits: a body nested past --max-json-depth or holding more keys and values than
// --max-json-values is refused as it is first read, naming the limit, before validation, unknown-field
// pruning, locks or merges (a document edit nested 9,000 levels deep, a body of thousands of unknown keys).
func TestJSONBodyLimits(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, apitest.Options{HTTP: httpapi.Config{MaxJSONValues: 500}})
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	sp := "/api/space/" + createSpace(t, c, map[string]any{"Slug": "dev"}).SpaceID.String()
	var f api.Filter
	c.Post(sp+"/filter", map[string]any{"Slug": "web", "From": "Unit", "Where": "Slug = 'web'"}).Expect(http.StatusOK).JSON(&f)
	doc := sp + "/filter/" + f.FilterID.String() + "/document"
	var read map[string]any
	c.Get(doc).Expect(http.StatusOK).JSON(&read)

	base, err := json.Marshal(read)
	require.NoError(t, err)
	deep := `{"Base": ` + string(base) + `, "Document": ` + strings.Repeat(`{"a": `, 9000) + `1` + strings.Repeat(`}`, 9000) + `}`
	e := c.Post(doc, apitest.Raw{ContentType: "application/json", Data: []byte(deep)}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Contains(t, e.Error.Message, fmt.Sprintf("deeper than %d levels", 64))

	unknown := make([]string, 300) // 300 keys and 300 values beside Slug: over the 500 this server allows
	for i := range unknown {
		unknown[i] = fmt.Sprintf(`"X%d": %d`, i, i)
	}
	body := `{"Slug": "many", ` + strings.Join(unknown, ", ") + `}`
	e = c.Post(sp+"/tag", apitest.Raw{ContentType: "application/json", Data: []byte(body)}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Contains(t, e.Error.Message, "more than 500 JSON keys and values")
	var tags []api.ExtendedTag
	c.Get(sp + "/tag").Expect(http.StatusOK).JSON(&tags)
	require.Empty(t, tags, "nothing was written")

	// Within the limits, unknown fields are still ignored and named.
	r := c.Post(sp+"/tag", apitest.Raw{ContentType: "application/json", Data: []byte(`{"Slug": "few", "X1": 1}`)}).Expect(http.StatusOK)
	require.Contains(t, strings.Join(r.Warnings(), "\n"), "X1")
}
