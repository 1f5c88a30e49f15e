package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

func TestChannels(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	sp := createSpace(t, c, map[string]any{"Slug": "ops"})
	chans := "/api/space/" + sp.SpaceID.String() + "/channel"
	tail, err := env.App.Store.Events.Tail(context.Background())
	require.NoError(t, err)

	body := map[string]any{
		"Slug": "deploy-bot",
		"Commands": map[string]any{
			"deploy": map[string]any{"Description": "Deploy a Unit", "Options": []map[string]any{
				{"Name": "unit", "DataType": "Unit", "Required": true}, {"Name": "replicas", "DataType": "int"}, {"Name": "dry", "DataType": "bool"}}},
			"status": map[string]any{"Description": "Report status"},
		},
		"Subscriptions": []map[string]any{{"EventTypes": []string{"release.published", "changeorder.promoted"}}},
	}
	var ch api.Channel
	c.Post(chans, body).Expect(http.StatusOK).JSON(&ch)
	require.Equal(t, "Disconnected", ch.Condition)
	require.GreaterOrEqual(t, ch.EventBookmark, tail, "a new Channel starts at the log's tail")
	require.Equal(t, []api.ChannelCommandOption{}, ch.Commands["status"].Options)
	require.Equal(t, api.ChannelCommandOptionDataType("Unit"), ch.Commands["deploy"].Options[0].DataType)
	require.Nil(t, ch.LastSeenAt)
	c.Post(chans, body).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	c.Post(chans+"?allow_exists=true", body).Expect(http.StatusOK)
	c.Post(chans, map[string]any{"Slug": "bad", "Commands": map[string]any{"has space": map[string]any{}}}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	c.Post(chans, map[string]any{"Slug": "bad", "Commands": map[string]any{"x": map[string]any{"Options": []map[string]any{{"Name": "a", "DataType": "float"}}}}}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// Get by ID or by Slug; GET -> edit -> PUT; the bookmark moves back and forth by patch.
	var got api.ExtendedChannel
	c.Get(chans + "/deploy-bot?include=SpaceID").Expect(http.StatusOK).JSON(&got)
	require.Equal(t, ch.ChannelID, got.Channel.ChannelID)
	require.Equal(t, "ops", got.Space.Slug)
	got.Channel.DisplayName = "Deployer"
	var upd api.Channel
	c.Put(chans+"/"+ch.ChannelID.String(), got.Channel).Expect(http.StatusOK).JSON(&upd)
	require.Equal(t, "Deployer", upd.DisplayName)
	c.Patch(chans+"/deploy-bot", map[string]any{"EventBookmark": 0}).Expect(http.StatusOK).JSON(&upd)
	require.Equal(t, int64(0), upd.EventBookmark)
	c.Patch(chans+"/deploy-bot", map[string]any{"EventBookmark": -1}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)

	var list []api.ExtendedChannel
	c.Get("/api/channel").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	c.Get(chans + "?" + where("EventBookmark = 0").Encode()).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)

	// Editing needs Edit; other organizations see nothing.
	viewer := env.Client(env.Token("acme", "vic", auth.RoleViewer))
	viewer.Patch(chans+"/deploy-bot", map[string]any{"EventBookmark": 5}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	other := env.Client(env.Token("other", "bob", auth.RoleAdmin))
	other.Get(chans+"/deploy-bot").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Get(chans+"/nope").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Delete(chans + "/deploy-bot").Expect(http.StatusOK)
	c.Get(chans+"/deploy-bot").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
}

// TestChannelLeaseOutlastsPoll: a poll renews its Channel's lease for its whole wait and LeaseSeconds
// more, so a bot that polls again right after a poll that waited its full timeout still holds the lease.
func TestChannelLeaseOutlastsPoll(t *testing.T) { inEachLongPollMode(t, testChannelLeaseOutlastsPoll) }

func testChannelLeaseOutlastsPoll(t *testing.T, opts apitest.Options) {
	t.Parallel()
	env := apitest.New(t, opts)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	sp := createSpace(t, admin, map[string]any{"Slug": "ops"})
	var ch api.Channel
	admin.Post("/api/space/"+sp.SpaceID.String()+"/channel", map[string]any{"Slug": "bot"}).Expect(http.StatusOK).JSON(&ch)
	base := "/api/space/" + sp.SpaceID.String() + "/channel/" + ch.ChannelID.String()
	var lease api.ChannelLease
	admin.Post(base+"/lease", nil).Expect(http.StatusOK).JSON(&lease)
	require.Equal(t, 60, lease.LeaseSeconds)
	leaseLeft := func() time.Duration {
		var left float64
		require.NoError(t, env.App.Store.Pool.QueryRow(context.Background(),
			"SELECT extract(epoch FROM expires_at - now()) FROM channel_lease WHERE channel_id = $1", ch.ChannelID).Scan(&left))
		return time.Duration(left * float64(time.Second))
	}
	require.LessOrEqual(t, leaseLeft(), 60*time.Second, "acquired, the lease lasts LeaseSeconds")

	done := make(chan struct{})
	go func() {
		defer close(done)
		admin.Post(base+"/poll", map[string]any{"ClaimToken": lease.ClaimToken, "TimeoutSeconds": 30}).Expect(http.StatusNoContent)
	}()
	waitPolls(t, env, 1, 1)
	require.Greater(t, leaseLeft(), 85*time.Second, "a 30-second poll renews the lease for its wait and LeaseSeconds more")
	env.App.Notifier.StopWaiters() // the poll ends now, with nothing
	<-done
}
