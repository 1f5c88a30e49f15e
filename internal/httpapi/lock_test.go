package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/configdata"
)

// interleave plays a concurrent writer: it runs stmts in a transaction of its own and leaves it open,
// starts req, and commits once req is either waiting on a lock in the database or has answered. It
// returns req's response. No timing is asserted: the order is settled by the database's locks.
func interleave(t *testing.T, env *apitest.Env, stmts []string, req func() *apitest.Response) *apitest.Response {
	t.Helper()
	ctx := context.Background()
	pool := env.App.Store.Pool
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	for _, s := range stmts {
		_, err := tx.Exec(ctx, s)
		require.NoError(t, err, s)
	}
	var resp *apitest.Response
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp = req()
	}()
	for waiting := false; !waiting; {
		select {
		case <-done:
			waiting = true
		default:
			var n int
			require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n))
			waiting = n > 0
			if !waiting {
				time.Sleep(2 * time.Millisecond) // polling, not a deadline
			}
		}
	}
	require.NoError(t, tx.Commit(ctx))
	<-done
	require.NotNil(t, resp, "the request failed the test")
	return resp
}

// TestUnitTargetCheckHoldsTheTarget: a Unit naming a Target while the Target's ToolchainType changes
// (the Target update holds its row and has found no Unit using it) sees the new ToolchainType, so a
// Unit never ends on a Target of another ToolchainType.
func TestUnitTargetCheckHoldsTheTarget(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	var k8s api.Target
	f.c.Post("/api/space/"+f.space.SpaceID.String()+"/target", map[string]any{"Slug": "cluster",
		"ToolchainType": configdata.KubernetesYAML, "ProviderType": "FluxOCI"}).Expect(http.StatusOK).JSON(&k8s)
	web := f.create(t, "web", configdata.KubernetesYAML)

	id := k8s.TargetID.String()
	targetUpdate := []string{
		"SELECT 1 FROM target WHERE target_id = '" + id + "' FOR UPDATE",
		"SELECT EXISTS (SELECT 1 FROM unit WHERE target_id = '" + id + "')",
		"UPDATE target SET toolchain_type = '" + configdata.AppConfigEnv + "', version = version + 1 WHERE target_id = '" + id + "'",
	}
	resp := interleave(t, f.env, targetUpdate, func() *apitest.Response {
		return f.c.Patch(f.path(web), map[string]any{"TargetID": id})
	})
	e := resp.ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "TargetID", e.Error.ErrorMetadata.Items[0].Item)
	var got api.ExtendedUnit
	f.c.Get(f.path(web)).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, web.UnitID, got.Unit.UnitID)
	require.Nil(t, got.Unit.TargetID)

	// Creating a Unit on it is the same.
	resp = interleave(t, f.env, []string{
		"SELECT 1 FROM target WHERE target_id = '" + id + "' FOR UPDATE",
		"UPDATE target SET toolchain_type = '" + configdata.KubernetesYAML + "', version = version + 1 WHERE target_id = '" + id + "'",
	}, func() *apitest.Response {
		return f.c.Post(f.unitsPath(), map[string]any{"Slug": "env", "ToolchainType": configdata.AppConfigEnv, "TargetID": id})
	})
	resp.ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
}

// TestBulkTagHoldsTheTag: putting a Tag on Revisions while the Tag is being deleted waits for the delete
// and then finds no Tag, rather than leaving a deleted Tag's ID on a Revision.
func TestBulkTagHoldsTheTag(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	var rel api.Tag
	f.c.Post("/api/space/"+f.space.SpaceID.String()+"/tag", map[string]any{"Slug": "release-1"}).Expect(http.StatusOK).JSON(&rel)
	web := f.create(t, "web", configdata.AppConfigEnv)
	f.put(t, web, "text/plain", "A=1\n").Expect(http.StatusOK)

	id := rel.TagID.String()
	tagDelete := []string{
		"SELECT 1 FROM tag WHERE tag_id = '" + id + "' FOR UPDATE",
		"UPDATE revision SET tags = tags - '" + id + "' WHERE tags ? '" + id + "'",
		"DELETE FROM tag WHERE tag_id = '" + id + "'",
	}
	resp := interleave(t, f.env, tagDelete, func() *apitest.Response {
		return f.c.Post("/api/unit/tag?"+where("Slug = 'web'").Encode(), map[string]any{"TagID": id})
	})
	resp.ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	var revs []api.ExtendedRevision
	f.c.Get("/api/revision?distinct_on=Off&limit=10&" + where("Tags ? '"+id+"'").Encode()).Expect(http.StatusOK).JSON(&revs)
	require.Empty(t, revs, "no Revision keeps a deleted Tag")
}
