package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// TestPollFanOutCost: one commit delivered to many waiting polls of an organization (worker event
// cursors and Channels) costs a bounded number of database statements, not one read per poll: the polls
// share one read of the log and claim their cursors and bookmarks together. Every poll still gets the
// event once.
func TestPollFanOutCost(t *testing.T) { inEachLongPollMode(t, testPollFanOutCost) }

func testPollFanOutCost(t *testing.T, opts apitest.Options) {
	t.Parallel()
	env := apitest.New(t, opts)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	sp := createSpace(t, admin, map[string]any{"Slug": "ops"})
	const workers, pollsEach, channels = 4, 15, 40 // within the per-caller bound of concurrent requests
	type poller struct {
		client *apitest.Client
		base   string
	}
	var pollers []poller
	for i := 0; i < workers; i++ {
		var w api.BridgeWorker
		admin.Post("/api/space/"+sp.SpaceID.String()+"/bridge_worker", map[string]any{"Slug": fmt.Sprintf("w%d", i)}).Expect(http.StatusOK).JSON(&w)
		pollers = append(pollers, poller{client: env.Client(workerToken(t, env, w.BridgeWorkerID, w.Secret)),
			base: "/api/space/" + sp.SpaceID.String() + "/bridge_worker/" + w.BridgeWorkerID.String()})
	}
	ctx := context.Background()
	cursors := func() int {
		var n int
		require.NoError(t, env.App.Store.Pool.QueryRow(ctx, "SELECT count(*) FROM bridge_worker_cursor WHERE name LIKE 'fan-%'").Scan(&n))
		return n
	}

	seen := func() int {
		var n int
		require.NoError(t, env.App.Store.Pool.QueryRow(ctx, "SELECT count(*) FROM channel WHERE last_seen_at IS NOT NULL").Scan(&n))
		return n
	}

	var wg sync.WaitGroup
	fromChannels := make([][]api.ChannelMessage, channels)
	for i := range fromChannels {
		var ch api.Channel
		admin.Post("/api/space/"+sp.SpaceID.String()+"/channel", map[string]any{"Slug": fmt.Sprintf("ch%d", i),
			"Subscriptions": []map[string]any{{"EventTypes": []string{"tag.created"}}}}).Expect(http.StatusOK).JSON(&ch)
		base := "/api/space/" + sp.SpaceID.String() + "/channel/" + ch.ChannelID.String()
		var lease api.ChannelLease
		admin.Post(base+"/lease", nil).Expect(http.StatusOK).JSON(&lease)
		wg.Add(1)
		go func() {
			defer wg.Done()
			admin.Post(base+"/poll", map[string]any{"ClaimToken": lease.ClaimToken, "TimeoutSeconds": 30}).Expect(http.StatusOK).JSON(&fromChannels[i])
		}()
	}
	got := make([][]api.EventLogEntry, workers*pollsEach)
	for i := range got {
		p := pollers[i%workers]
		name := fmt.Sprintf("fan-%d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.client.Post(p.base+"/event_cursor/"+name+"/poll", map[string]any{"TimeoutSeconds": 30, "EventTypes": []string{"tag.created"}}).
				Expect(http.StatusOK).JSON(&got[i])
		}()
	}
	// Every poll has its cursor; then wait until the database is quiet: they are all waiting.
	require.Eventually(t, func() bool { return cursors() == len(got) && seen() == channels }, 20*time.Second, 10*time.Millisecond)
	before := quietStatements(env, 40*time.Millisecond)
	admin.Post("/api/space/"+sp.SpaceID.String()+"/tag", map[string]any{"Slug": "v1"}).Expect(http.StatusOK)
	wg.Wait()
	cost := env.App.Store.Statements() - before
	for i, es := range got {
		require.Len(t, es, 1, "worker poll %d", i)
		require.Equal(t, "tag.created", es[0].EventType)
	}
	for i, msgs := range fromChannels {
		require.Len(t, msgs, 1, "channel poll %d", i)
		require.Equal(t, "tag.created", eventOf(t, msgs[0]).EventType)
	}
	// The Tag's own write is a handful of statements; the hundred polls add one shared read (one
	// statement) and a few batches of cursor and bookmark claims; polls reading on their own would each run
	// a transaction of five or more, and the count would grow with them.
	polls := len(got) + channels
	t.Logf("%d polls, one commit: %d statements", polls, cost)
	require.Less(t, cost, int64(25), "statements for one commit delivered to %d waiting polls", polls)
}

// TestSolePollCost: a worker poll woken alone reads the log and claims its cursor in one statement, so
// one event reaches it in one round trip after the writer's commit (beside the write's own statements).
func TestSolePollCost(t *testing.T) { inEachLongPollMode(t, testSolePollCost) }

func testSolePollCost(t *testing.T, opts apitest.Options) {
	t.Parallel()
	env := apitest.New(t, opts)
	f := newWorkerFixture(t, env)
	require.Empty(t, f.poll(t, f.worker, "solo", nil)) // places the cursor
	tag := func(slug string) {
		f.admin.Post("/api/space/"+f.space.SpaceID.String()+"/tag", map[string]any{"Slug": slug}).Expect(http.StatusOK)
	}
	// Background statements can only add to a count, so the least of a few tries is each path's own cost.
	write, delivered := int64(1<<62), int64(1<<62)
	for i := 0; i < 5; i++ {
		before := quietStatements(env, 20*time.Millisecond)
		tag(fmt.Sprintf("alone-%d", i))
		write = min(write, quietStatements(env, 20*time.Millisecond)-before)
		require.Len(t, f.poll(t, f.worker, "solo", nil), 1, "the cursor passes that Tag: the next poll waits")

		got := make(chan []api.EventLogEntry, 1)
		go func() {
			got <- f.poll(t, f.worker, "solo", map[string]any{"TimeoutSeconds": 30, "EventTypes": []string{"tag.created"}})
		}()
		before = quietStatements(env, 20*time.Millisecond)
		tag(fmt.Sprintf("watched-%d", i))
		es := <-got
		delivered = min(delivered, env.App.Store.Statements()-before)
		require.Len(t, es, 1)
		require.Equal(t, "tag.created", es[0].EventType)
		require.Equal(t, fmt.Sprintf("watched-%d", i), es[0].Payload.(map[string]any)["Slug"], "the poll gets the event after its cursor, once")
	}
	t.Logf("a Tag written: %d statements; written and delivered to one waiting poll: %d", write, delivered)
	require.Equal(t, write+1, delivered, "statements a sole waiting poll adds to a commit")
}

// quietStatements waits until the Env's store has sent no statement for five pauses in a row (background
// work has settled, started polls are waiting) and returns its statement count.
func quietStatements(env *apitest.Env, pause time.Duration) int64 {
	last := env.App.Store.Statements()
	for stable := 0; stable < 5; {
		time.Sleep(pause)
		if now := env.App.Store.Statements(); now != last {
			last, stable = now, 0
		} else {
			stable++
		}
	}
	return last
}
