// Command hubd-bot is the reference bot: it serves an "echo" command (its result is its parameters) on
// a Channel and logs the events the Channel subscribes to.
//
//	hubd-bot -base http://localhost:8080 -account <ServiceAccountID> -key bot-key.json -space ops -channel deployer
//
// The key file holds the private JWK whose public half is registered for the ServiceAccount
// (POST /api/service_account/{id}/key with {"PublicJWK": ...}).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/lestrrat-go/jwx/v2/jwk"

	"github.com/hubd/hubd/examples/bot"
)

func main() {
	base := flag.String("base", "http://localhost:8080", "hubd's base address")
	account := flag.String("account", "", "the bot's ServiceAccount ID")
	keyFile := flag.String("key", "", "file with the account's private key as a JWK")
	space := flag.String("space", "", "the Channel's Space (ID or Slug)")
	channel := flag.String("channel", "", "the Channel (ID or Slug)")
	flag.Parse()
	if err := run(*base, *account, *keyFile, *space, *channel); err != nil {
		fmt.Fprintln(os.Stderr, "hubd-bot:", err)
		os.Exit(1)
	}
}

func run(base, account, keyFile, space, channel string) error {
	raw, err := os.ReadFile(keyFile)
	if err != nil {
		return err
	}
	key, err := jwk.ParseKey(raw)
	if err != nil {
		return fmt.Errorf("reading the key: %w", err)
	}
	host, _ := os.Hostname()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	b, err := bot.New(bot.Config{
		BaseURL: base, AccountID: account, Key: key, SpaceID: space, Channel: channel, HolderAddress: host, Logger: logger,
		Commands: map[string]bot.Handler{
			"echo": func(_ context.Context, run bot.CommandRun) (any, error) { return run.Parameters, nil },
		},
		OnEvent: func(_ context.Context, e bot.Event) {
			logger.Info("event", "type", e.EventType, "cursor", e.CursorID, "subject", e.SubjectEntityID, "payload", string(e.Payload))
		},
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return b.Run(ctx)
}
