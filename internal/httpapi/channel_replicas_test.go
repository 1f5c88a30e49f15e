package httpapi_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// TestLongPollAcrossReplicas: a poll held on one replica wakes when a run is created, or an event
// committed, on another.
func TestLongPollAcrossReplicas(t *testing.T) { inEachLongPollMode(t, testLongPollAcrossReplicas) }

func testLongPollAcrossReplicas(t *testing.T, opts apitest.Options) {
	t.Parallel()
	envA := apitest.New(t, opts)
	envB := apitest.New(t, onDatabase(opts, envA.DBURL))
	f := newBotFixture(t, envA)
	botB := envB.Client(envB.Token("acme", "deploy-bot", auth.RoleMember))
	l := f.lease(t, botB, nil)

	type polled struct {
		msgs    []api.ChannelMessage
		elapsed time.Duration
	}
	const timeout = 50
	waitOnB := func() <-chan polled {
		out := make(chan polled, 1)
		go func() {
			start := time.Now()
			msgs := f.poll(t, botB, l.ClaimToken, timeout, 10)
			out <- polled{msgs, time.Since(start)}
		}()
		return out
	}

	// The run arrives while the poll waits rather than before.
	done := waitOnB()
	waitPolls(t, envB, 1, 1)
	run := f.run(t, map[string]any{"Command": "status"})
	got := <-done
	require.Len(t, got.msgs, 1)
	require.Equal(t, run.CommandRunID, runOf(t, got.msgs[0]).CommandRunID)
	require.Less(t, got.elapsed, timeout*time.Second/2, "woken by the commit, not by the timeout")

	done = waitOnB()
	waitPolls(t, envB, 1, 1)
	f.admin.Post("/api/space/"+f.space.SpaceID.String()+"/unit", map[string]any{"Slug": "late", "ToolchainType": "Kubernetes/YAML"}).Expect(http.StatusOK)
	got = <-done
	require.NotEmpty(t, got.msgs)
	require.Equal(t, "unit.created", eventOf(t, got.msgs[len(got.msgs)-1]).EventType)
	require.Less(t, got.elapsed, timeout*time.Second/2)
}

// TestChannelsAcrossReplicas runs the protocol against two servers on one database: racing claimers on
// both get one lease between them; a run delivered on one replica is delivered again on the other after
// the lease moves, and only the first answer counts; events are handed out once and in order across the
// move; a run expires once although both replicas sweep; cancel rules hold whichever replica is asked.
func TestChannelsAcrossReplicas(t *testing.T) { inEachLongPollMode(t, testChannelsAcrossReplicas) }

func testChannelsAcrossReplicas(t *testing.T, opts apitest.Options) {
	t.Parallel()
	envA := apitest.New(t, opts)
	envB := apitest.New(t, onDatabase(opts, envA.DBURL))
	f := newBotFixture(t, envA)
	botA := f.bot
	botB := envB.Client(envB.Token("acme", "deploy-bot", auth.RoleMember))
	adminB := envB.Client(envB.Token("acme", "alice", auth.RoleAdmin))

	// Racing claimers on both replicas: one lease.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var winners []api.ChannelLease
	for i := 0; i < 12; i++ {
		c := botA
		if i%2 == 1 {
			c = botB
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := c.Post(f.base+"/lease", nil)
			require.Contains(t, []int{http.StatusOK, http.StatusConflict}, r.Status)
			if r.Status == http.StatusOK {
				var l api.ChannelLease
				r.JSON(&l)
				mu.Lock()
				winners = append(winners, l)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Len(t, winners, 1)
	botA.Delete(f.base + "/lease?claim_token=" + winners[0].ClaimToken.String()).Expect(http.StatusNoContent)

	// Delivered on A, lease lost, delivered again on B; B's answer wins, A's late one is refused.
	leaseA := f.lease(t, botA, nil)
	run := f.run(t, map[string]any{"Command": "status"})
	require.Len(t, f.poll(t, botA, leaseA.ClaimToken, 5, 10), 1)
	botA.Delete(f.base + "/lease?claim_token=" + leaseA.ClaimToken.String()).Expect(http.StatusNoContent)
	leaseB := f.lease(t, botB, nil)
	msgs := f.poll(t, botB, leaseB.ClaimToken, 5, 10)
	require.Len(t, msgs, 1)
	require.Equal(t, run.CommandRunID, runOf(t, msgs[0]).CommandRunID)
	result := f.base + "/command_run/" + run.CommandRunID.String() + "/result"
	botB.Post(result, map[string]any{"Status": "Completed", "Result": "from B"}).Expect(http.StatusOK)
	botA.Post(result, map[string]any{"Status": "Completed", "Result": "from A"}).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	require.Equal(t, "from B", f.getRun(t, run.CommandRunID).Result)

	// Events: in order on B, then none again on A after the lease moves, then only what is new.
	units := "/api/space/" + f.space.SpaceID.String() + "/unit"
	for _, slug := range []string{"u1", "u2", "u3"} {
		f.admin.Post(units, map[string]any{"Slug": slug, "ToolchainType": "Kubernetes/YAML"}).Expect(http.StatusOK)
	}
	msgs = f.poll(t, botB, leaseB.ClaimToken, 5, 0)
	require.Len(t, msgs, 3)
	for i, slug := range []string{"u1", "u2", "u3"} {
		require.Equal(t, slug, eventOf(t, msgs[i]).Payload.(map[string]any)["Slug"])
	}
	botB.Delete(f.base + "/lease?claim_token=" + leaseB.ClaimToken.String()).Expect(http.StatusNoContent)
	leaseA = f.lease(t, botA, nil)
	require.Empty(t, f.poll(t, botA, leaseA.ClaimToken, 0, 0))
	adminB.Post(units, map[string]any{"Slug": "u4", "ToolchainType": "Kubernetes/YAML"}).Expect(http.StatusOK)
	msgs = f.poll(t, botA, leaseA.ClaimToken, 5, 0)
	require.Len(t, msgs, 1)
	require.Equal(t, "u4", eventOf(t, msgs[0]).Payload.(map[string]any)["Slug"])

	// Both replicas sweep; the run expires once (one command_run.updated event).
	expiring := f.run(t, map[string]any{"Command": "deploy", "Options": map[string]string{"space": "ops"}, "DeadlineSeconds": 1})
	require.Eventually(t, func() bool { return f.getRun(t, expiring.CommandRunID).Status == api.CommandRunStatusExpired }, 20*time.Second, 200*time.Millisecond)
	var updates int
	require.NoError(t, envA.App.Store.Pool.QueryRow(context.Background(),
		"SELECT count(*) FROM event_log WHERE subject_entity_id = $1 AND event_type = 'command_run.updated'", expiring.CommandRunID).Scan(&updates))
	require.Equal(t, 1, updates)

	// Cancel on the other replica; a second cancel is refused.
	waiting := f.run(t, map[string]any{"Command": "status"})
	cancel := f.base + "/command_run/" + waiting.CommandRunID.String() + "/cancel"
	adminB.Post(cancel, nil).Expect(http.StatusOK)
	f.admin.Post(cancel, nil).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
}
