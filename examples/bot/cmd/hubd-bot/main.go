// Command hubd-bot is the reference bot: it serves an "echo" command (its result is its parameters) on
// a Channel and logs the events the Channel subscribes to.
//
//	hubd-bot keygen bot-key.json   # writes a new private key, prints the body that registers its public half
//	hubd-bot -account <ServiceAccountID> -key bot-key.json -space ops -channel deployer
//
// Register the printed body for the bot's ServiceAccount (POST /api/service_account/{id}/key) before
// running it. -base is the service's address (make run serves http://127.0.0.1:8080).
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
	if len(os.Args) > 1 && os.Args[1] == "keygen" {
		if len(os.Args) != 3 {
			fmt.Fprintln(os.Stderr, "usage: hubd-bot keygen <private key file>")
			os.Exit(2)
		}
		body, err := bot.GenerateKey(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, "hubd-bot:", err)
			os.Exit(1)
		}
		fmt.Println(string(body))
		return
	}
	base := flag.String("base", "http://127.0.0.1:8080", "hubd's base address")
	account := flag.String("account", "", "the bot's ServiceAccount ID")
	keyFile := flag.String("key", "", "file with the account's private key as a JWK (hubd-bot keygen makes one)")
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
