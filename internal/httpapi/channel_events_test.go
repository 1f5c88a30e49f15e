package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

func TestChannelEvents(t *testing.T) { inEachLongPollMode(t, testChannelEvents) }

func testChannelEvents(t *testing.T, opts apitest.Options) {
	t.Parallel()
	env := apitest.New(t, opts)
	f := newBotFixture(t, env)
	l := f.lease(t, f.bot, nil)
	units := "/api/space/" + f.space.SpaceID.String() + "/unit"

	// Subscribed events arrive in log order, once; others (space.created) are skipped.
	f.admin.Post("/api/space", map[string]any{"Slug": "elsewhere"}).Expect(http.StatusOK)
	f.admin.Post(units, map[string]any{"Slug": "a", "ToolchainType": "Kubernetes/YAML"}).Expect(http.StatusOK)
	f.admin.Post(units, map[string]any{"Slug": "b", "ToolchainType": "Kubernetes/YAML"}).Expect(http.StatusOK)
	other := env.Client(env.Token("other", "eve", auth.RoleAdmin))
	osp := createSpace(t, other, map[string]any{"Slug": "ops"})
	other.Post("/api/space/"+osp.SpaceID.String()+"/unit", map[string]any{"Slug": "x", "ToolchainType": "Kubernetes/YAML"}).Expect(http.StatusOK)

	msgs := f.poll(t, f.bot, l.ClaimToken, 5, 10)
	require.Len(t, msgs, 2, "only this organization's subscribed events")
	for _, m := range msgs {
		require.Equal(t, "Event", messageType(t, m))
		require.Equal(t, "unit.created", eventOf(t, m).EventType)
		require.Equal(t, f.space.SpaceID, *eventOf(t, m).SpaceID)
	}
	require.Less(t, eventOf(t, msgs[0]).CursorID, eventOf(t, msgs[1]).CursorID)
	require.Equal(t, "a", eventOf(t, msgs[0]).Payload.(map[string]any)["Slug"])
	require.Empty(t, f.poll(t, f.bot, l.ClaimToken, 0, 10), "at most once")

	// The bookmark advanced; moving it back replays.
	var ch api.ExtendedChannel
	f.admin.Get(f.base).Expect(http.StatusOK).JSON(&ch)
	require.GreaterOrEqual(t, ch.Channel.EventBookmark, eventOf(t, msgs[1]).CursorID)
	f.admin.Patch(f.base, map[string]any{"EventBookmark": eventOf(t, msgs[0]).CursorID}).Expect(http.StatusOK)
	replay := f.poll(t, f.bot, l.ClaimToken, 5, 10)
	require.Len(t, replay, 1)
	require.Equal(t, eventOf(t, msgs[1]).CursorID, eventOf(t, replay[0]).CursorID)

	// A PUT of what a GET returned keeps the bookmark polls have moved since (no double delivery); a
	// bookmark past the tail is refused; null moves it to the tail.
	f.admin.Get(f.base).Expect(http.StatusOK).JSON(&ch)
	stale := ch.Channel
	f.admin.Post(units, map[string]any{"Slug": "c", "ToolchainType": "Kubernetes/YAML"}).Expect(http.StatusOK)
	require.Len(t, f.poll(t, f.bot, l.ClaimToken, 5, 10), 1)
	stale.DisplayName = "Deployer"
	var put api.Channel
	f.admin.Put(f.base, stale).Expect(http.StatusOK).JSON(&put)
	require.Greater(t, put.EventBookmark, stale.EventBookmark)
	require.Empty(t, f.poll(t, f.bot, l.ClaimToken, 0, 10))
	f.admin.Patch(f.base, map[string]any{"EventBookmark": put.EventBookmark + 1_000_000}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	f.admin.Patch(f.base, map[string]any{"EventBookmark": 0}).Expect(http.StatusOK)
	var tail api.Channel
	f.admin.Patch(f.base, map[string]any{"EventBookmark": nil}).Expect(http.StatusOK).JSON(&tail)
	require.GreaterOrEqual(t, tail.EventBookmark, put.EventBookmark)
	require.Empty(t, f.poll(t, f.bot, l.ClaimToken, 0, 10))

	// A subscription to a Target selects the events of its Units (any type when EventTypes is empty).
	var target api.Target
	f.admin.Post("/api/space/"+f.space.SpaceID.String()+"/target", map[string]any{"Slug": "cluster", "ToolchainType": "Kubernetes/YAML", "ProviderType": "ArgoCDOCI"}).
		Expect(http.StatusOK).JSON(&target)
	f.admin.Patch(f.base, map[string]any{"Subscriptions": []map[string]any{{"EventTypes": []string{}, "TargetID": target.TargetID}}}).Expect(http.StatusOK)
	f.admin.Post(units, map[string]any{"Slug": "untargeted", "ToolchainType": "Kubernetes/YAML"}).Expect(http.StatusOK)
	f.admin.Post(units, map[string]any{"Slug": "targeted", "ToolchainType": "Kubernetes/YAML", "TargetID": target.TargetID}).Expect(http.StatusOK)
	msgs = f.poll(t, f.bot, l.ClaimToken, 5, 10)
	require.Len(t, msgs, 2, "the Target's own creation and its Unit's; not the other Unit's")
	require.Equal(t, "target.created", eventOf(t, msgs[0]).EventType)
	require.Equal(t, "unit.created", eventOf(t, msgs[1]).EventType)
	require.Equal(t, target.TargetID, *eventOf(t, msgs[1]).TargetID)
	require.Equal(t, "targeted", eventOf(t, msgs[1]).Payload.(map[string]any)["Slug"])
}

// TestPollEndsAtShutdown: a replica shutting down answers its waiting polls at once (204), so bots move
// to another replica instead of being cut off.
func TestPollEndsAtShutdown(t *testing.T) { inEachLongPollMode(t, testPollEndsAtShutdown) }

func testPollEndsAtShutdown(t *testing.T, opts apitest.Options) {
	t.Parallel()
	env := apitest.New(t, opts)
	f := newBotFixture(t, env)
	l := f.lease(t, f.bot, nil)
	done := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		defer func() { done <- time.Since(start) }() // also when the poll fails the test, which then ends
		require.Empty(t, f.poll(t, f.bot, l.ClaimToken, 50, 10))
	}()
	waitPolls(t, env, 1, 1)
	env.App.Notifier.StopWaiters()
	require.Less(t, <-done, 25*time.Second, "answered at shutdown, not at its timeout")
}
