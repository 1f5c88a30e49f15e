package httpapi_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// TestCreateRace: creates of one Slug racing each other make one entity. Without allow_exists exactly
// one succeeds and the others are 409 AlreadyExists; with it every one answers that entity.
func TestCreateRace(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	sp := createSpace(t, admin, map[string]any{"Slug": "race"})
	tags := "/api/space/" + sp.SpaceID.String() + "/tag"

	race := func(path, slug string) []*apitest.Response {
		const racers = 8
		out := make([]*apitest.Response, racers)
		var wg sync.WaitGroup
		for i := range out {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i] = admin.Post(path, map[string]any{"Slug": slug})
			}()
		}
		wg.Wait()
		return out
	}

	created := 0
	for _, r := range race(tags, "plain") {
		switch r.Status {
		case http.StatusOK:
			created++
		default:
			r.ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
		}
	}
	require.Equal(t, 1, created, "exactly one racing create succeeds")

	ids := map[string]bool{}
	for _, r := range race(tags+"?allow_exists=true", "shared") {
		var tag api.Tag
		r.Expect(http.StatusOK).JSON(&tag)
		ids[tag.TagID.String()] = true
	}
	require.Len(t, ids, 1, "every racing create with allow_exists answers the one Tag")
}
