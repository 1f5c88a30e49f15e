package event_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/event"
)

// TestNotifierOnNotify: a handler registered for a channel is called when the listener connects (what it
// caches may have changed meanwhile) and at each notification on its channel, committed by any connection.
func TestNotifierOnNotify(t *testing.T) {
	t.Parallel()
	url := apitest.NewDatabase(t)
	n := event.NewNotifier(url, slog.New(slog.NewTextHandler(io.Discard, nil)))
	calls := make(chan struct{}, 16)
	n.OnNotify("hubd_test_channel", func() { calls <- struct{}{} })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go n.Run(ctx, event.Channel)

	wait := func(why string) {
		t.Helper()
		select {
		case <-calls:
		case <-time.After(10 * time.Second):
			t.Fatal(why)
		}
	}
	wait("called when the listener connects")
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })
	_, err = conn.Exec(ctx, "SELECT pg_notify('hubd_test_channel', '')")
	require.NoError(t, err)
	wait("called at a notification on its channel")
}
