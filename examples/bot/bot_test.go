package bot_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/examples/bot"
	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// TestReferenceBot runs the reference bot against a real hubd: it signs in with its key, holds the lease,
// answers commands (and fails or rejects what it should) and reacts to an event.
func TestReferenceBot(t *testing.T) {
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))

	// The bot's account, its key, and a Channel it may claim.
	var account api.ServiceAccount
	admin.Post("/api/service_account", map[string]any{"Slug": "echo-bot"}).Expect(http.StatusOK).JSON(&account)
	// hubd-bot keygen: the private key goes to a file only its owner reads, and the printed body registers
	// the public half as it is.
	keyFile := filepath.Join(t.TempDir(), "bot-key.json")
	register, err := bot.GenerateKey(keyFile)
	require.NoError(t, err)
	info, err := os.Stat(keyFile)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	_, err = bot.GenerateKey(keyFile)
	require.Error(t, err, "an existing key file is never overwritten")
	admin.Post("/api/service_account/"+account.ServiceAccountID.String()+"/key",
		apitest.Raw{ContentType: "application/json", Data: register}).Expect(http.StatusOK)
	raw, err := os.ReadFile(keyFile)
	require.NoError(t, err)
	key, err := jwk.ParseKey(raw)
	require.NoError(t, err)
	var sp api.Space
	admin.Post("/api/space", map[string]any{"Slug": "ops"}).Expect(http.StatusOK).JSON(&sp)
	channels := "/api/space/" + sp.SpaceID.String() + "/channel"
	admin.Post(channels, map[string]any{
		"Slug": "echo",
		"Commands": map[string]any{
			"echo":  map[string]any{"Options": []map[string]any{{"Name": "text", "DataType": "string", "Required": true}}},
			"boom":  map[string]any{},
			"quiet": map[string]any{},
			"other": map[string]any{},
		},
		"Subscriptions": []map[string]any{{"EventTypes": []string{"unit.created"}}},
		"Permissions":   map[string]any{"Claim": map[string]any{"UserIDs": map[string]bool{account.UserID.String(): true}}},
	}).Expect(http.StatusOK)

	var mu sync.Mutex
	var events []bot.Event
	b, err := bot.New(bot.Config{
		// Reached by another name than the service's own base address: the assertion's audience comes from
		// GET /api/info, not from the address the bot uses.
		BaseURL: strings.Replace(env.URL, "127.0.0.1", "localhost", 1), AccountID: account.ServiceAccountID.String(), Key: key, SpaceID: "ops", Channel: "echo",
		HolderAddress: "test-bot", PollSeconds: 5, HTTPClient: &http.Client{Transport: env.Transport()},
		Commands: map[string]bot.Handler{
			"echo": func(_ context.Context, run bot.CommandRun) (any, error) {
				return map[string]any{"said": run.Parameters["text"]}, nil
			},
			"boom":  func(context.Context, bot.CommandRun) (any, error) { return nil, errors.New("it broke") },
			"quiet": func(context.Context, bot.CommandRun) (any, error) { return nil, nil },
		},
		OnEvent: func(_ context.Context, e bot.Event) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	var ch api.ExtendedChannel
	require.Eventually(t, func() bool {
		admin.Get(channels + "/echo").Expect(http.StatusOK).JSON(&ch)
		return ch.Channel.Condition == "Connected"
	}, 20*time.Second, 100*time.Millisecond)
	require.Equal(t, "test-bot", ch.Channel.LeaseHolderAddress)

	outcome := func(body map[string]any) api.CommandRun {
		var run api.CommandRun
		admin.Post("/api/command_run", body).Expect(http.StatusOK).JSON(&run)
		path := channels + "/echo/command_run/" + run.CommandRunID.String()
		require.Eventually(t, func() bool {
			var ext api.ExtendedCommandRun
			admin.Get(path).Expect(http.StatusOK).JSON(&ext)
			run = ext.CommandRun
			return run.CompletedAt != nil
		}, 20*time.Second, 100*time.Millisecond)
		return run
	}
	run := outcome(map[string]any{"Command": "echo", "Options": map[string]string{"text": "hello"}})
	require.Equal(t, api.CommandRunStatusCompleted, run.Status)
	require.Equal(t, map[string]any{"said": "hello"}, run.Result)
	run = outcome(map[string]any{"Command": "boom"})
	require.Equal(t, api.CommandRunStatusFailed, run.Status)
	require.Equal(t, "it broke", run.ErrorMessage)
	run = outcome(map[string]any{"Command": "quiet"})
	require.Equal(t, api.CommandRunStatusCompleted, run.Status)
	require.Nil(t, run.Result)

	// The bot claimed only the commands it serves, so it never gets "other": the run waits.
	var waiting api.CommandRun
	admin.Post("/api/command_run", map[string]any{"Command": "other", "DeadlineSeconds": 60}).Expect(http.StatusOK).JSON(&waiting)

	// An event the Channel subscribes to reaches the bot.
	var unit api.UnitCreateOrUpdateResponse
	admin.Post("/api/space/"+sp.SpaceID.String()+"/unit", map[string]any{"Slug": "web", "ToolchainType": "Kubernetes/YAML"}).Expect(http.StatusOK).JSON(&unit)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(events) > 0
	}, 20*time.Second, 100*time.Millisecond)
	mu.Lock()
	require.Equal(t, "unit.created", events[0].EventType)
	require.Equal(t, unit.Unit.UnitID.String(), events[0].SubjectEntityID)
	var payload map[string]any
	require.NoError(t, json.Unmarshal(events[0].Payload, &payload))
	require.Equal(t, "web", payload["Slug"])
	mu.Unlock()

	var ext api.ExtendedCommandRun
	admin.Get(channels + "/echo/command_run/" + waiting.CommandRunID.String()).Expect(http.StatusOK).JSON(&ext)
	require.Equal(t, api.CommandRunStatusWaiting, ext.CommandRun.Status)

	// Stopping releases the lease at once.
	cancel()
	require.NoError(t, <-done)
	admin.Get(channels + "/echo").Expect(http.StatusOK).JSON(&ch)
	require.Equal(t, "Disconnected", ch.Channel.Condition)
}
