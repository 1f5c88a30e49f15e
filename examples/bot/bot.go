// Package bot is a small reference command bot for hubd's Channel protocol. It signs in as its
// ServiceAccount with a registered key (RFC 7523 signed assertion, renewed before it expires), holds its
// Channel's lease, long-polls it, answers the commands it has handlers for and passes events to a
// callback. It talks plain HTTP and JSON, as a bot in any language would.
package bot

import (
	"bytes"
	"context"
	"crypto"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jwt"
)

// CommandRun is a run handed to the bot.
type CommandRun struct {
	CommandRunID string
	Command      string
	Parameters   map[string]any
	UserID       string
}

// Event is an event of the log handed to the bot.
type Event struct {
	CursorID          int64
	EventType         string
	SpaceID           *string
	TargetID          *string
	SubjectEntityType string
	SubjectEntityID   string
	Payload           json.RawMessage
}

// Handler answers a command: its result is reported as Completed, its error as Failed.
type Handler func(ctx context.Context, run CommandRun) (any, error)

// Config is what the bot needs.
type Config struct {
	BaseURL   string // the service's base address (without /api)
	AccountID string // the ServiceAccount's ID: the assertion's issuer and subject
	Key       jwk.Key
	SpaceID   string // Space and Channel, by ID or Slug
	Channel   string
	Commands  map[string]Handler
	OnEvent   func(ctx context.Context, e Event)
	// HolderAddress is shown on the Channel while the bot holds its lease.
	HolderAddress string
	// PollSeconds is the long poll's wait (30 when zero).
	PollSeconds int
	HTTPClient  *http.Client
	Logger      *slog.Logger
}

// Bot runs the protocol.
type Bot struct {
	cfg Config
	kid string

	mu         sync.Mutex // guards the token: handlers report results concurrently with polls
	token      string
	tokenUntil time.Time
	audience   string // what an assertion names as its audience: the service's token endpoint (GET /api/info)
}

// handlerTimeout keeps a handler inside the 30 seconds the service gives a delivered run.
const handlerTimeout = 25 * time.Second

// New checks the configuration and returns a Bot.
func New(cfg Config) (*Bot, error) {
	if cfg.BaseURL == "" || cfg.AccountID == "" || cfg.Key == nil || cfg.SpaceID == "" || cfg.Channel == "" {
		return nil, errors.New("bot: BaseURL, AccountID, Key, SpaceID and Channel are required")
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.PollSeconds == 0 {
		cfg.PollSeconds = 30
	}
	// The service names a registered key by its RFC 7638 thumbprint.
	tp, err := cfg.Key.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("bot: key thumbprint: %w", err)
	}
	return &Bot{cfg: cfg, kid: base64.RawURLEncoding.EncodeToString(tp)}, nil
}

// errLeaseLost means the claim token no longer holds the lease: acquire it again.
var errLeaseLost = errors.New("lease lost")

// Run holds the lease and serves until ctx ends, then releases the lease.
func (b *Bot) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		claim, err := b.acquire(ctx)
		if err != nil {
			b.cfg.Logger.Warn("acquiring the lease", "err", err)
			sleep(ctx, 2*time.Second)
			continue
		}
		err = b.serve(ctx, claim)
		if ctx.Err() != nil {
			b.release(claim)
			return nil
		}
		b.cfg.Logger.Warn("lost the lease; acquiring it again", "err", err)
	}
	return nil
}

// serve polls with the claim until the lease is lost. Runs are handled on their own goroutines, so the
// bot keeps polling (which renews the lease) while handlers work; a poll that fails for another reason
// (network, a replica restarting) is retried with the same claim.
func (b *Bot) serve(ctx context.Context, claim string) error {
	var handlers sync.WaitGroup
	defer handlers.Wait()
	for {
		msgs, err := b.poll(ctx, claim)
		if errors.Is(err, errLeaseLost) || ctx.Err() != nil {
			return err
		}
		if err != nil {
			b.cfg.Logger.Warn("polling; retrying", "err", err)
			sleep(ctx, time.Second)
			continue
		}
		for _, m := range msgs {
			switch {
			case m.CommandRun != nil:
				run := *m.CommandRun
				handlers.Add(1)
				go func() {
					defer handlers.Done()
					b.answer(ctx, run)
				}()
			case m.Event != nil && b.cfg.OnEvent != nil:
				b.cfg.OnEvent(ctx, *m.Event)
			}
		}
	}
}

func (b *Bot) channelPath() string {
	return "/api/space/" + url.PathEscape(b.cfg.SpaceID) + "/channel/" + url.PathEscape(b.cfg.Channel)
}

func (b *Bot) acquire(ctx context.Context) (string, error) {
	commands := make([]string, 0, len(b.cfg.Commands))
	for name := range b.cfg.Commands {
		commands = append(commands, name)
	}
	var lease struct{ ClaimToken string }
	status, err := b.call(ctx, http.MethodPost, b.channelPath()+"/lease", map[string]any{"Commands": commands, "HolderAddress": b.cfg.HolderAddress}, &lease)
	if err != nil {
		return "", err
	}
	if status != http.StatusOK {
		return "", fmt.Errorf("lease request answered %d", status)
	}
	return lease.ClaimToken, nil
}

func (b *Bot) release(claim string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := b.call(ctx, http.MethodDelete, b.channelPath()+"/lease?claim_token="+url.QueryEscape(claim), nil, nil); err != nil {
		b.cfg.Logger.Warn("releasing the lease", "err", err)
	}
}

type message struct {
	Type       string
	CommandRun *CommandRun
	Event      *Event
}

func (b *Bot) poll(ctx context.Context, claim string) ([]message, error) {
	var msgs []message
	body := map[string]any{"ClaimToken": claim, "TimeoutSeconds": b.cfg.PollSeconds}
	if len(b.cfg.Commands) == 0 {
		body["MaxRuns"] = 0 // events only
	}
	status, err := b.call(ctx, http.MethodPost, b.channelPath()+"/poll", body, &msgs)
	switch {
	case err != nil:
		return nil, err
	case status == http.StatusConflict:
		return nil, errLeaseLost
	case status == http.StatusNoContent:
		return nil, nil
	case status != http.StatusOK:
		return nil, fmt.Errorf("poll answered %d", status)
	}
	return msgs, nil
}

// answer runs the handler and reports its outcome. Runs may be delivered again after a lost lease, so
// handlers must tolerate repeats; a repeat already answered is refused with 409, which is fine.
func (b *Bot) answer(ctx context.Context, run CommandRun) {
	body := map[string]any{}
	if h, ok := b.cfg.Commands[run.Command]; !ok {
		body["Status"], body["ErrorMessage"] = "Rejected", "this bot does not serve "+run.Command
	} else if result, err := safely(ctx, h, run); err != nil {
		body["Status"], body["ErrorMessage"] = "Failed", err.Error()
	} else {
		body["Status"] = "Completed"
		if result != nil {
			body["Result"] = result
		}
	}
	path := b.channelPath() + "/command_run/" + url.PathEscape(run.CommandRunID) + "/result"
	status, err := b.call(ctx, http.MethodPost, path, body, nil)
	if err != nil || (status != http.StatusOK && status != http.StatusConflict) {
		b.cfg.Logger.Warn("reporting a result", "run", run.CommandRunID, "status", status, "err", err)
	}
}

// safely runs a handler with its deadline, turning a panic or an overrun into an error.
func safely(ctx context.Context, h Handler, run CommandRun) (result any, err error) {
	ctx, cancel := context.WithTimeout(ctx, handlerTimeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panicked: %v", p)
		}
	}()
	result, err = h(ctx, run)
	if err == nil && ctx.Err() != nil {
		err = fmt.Errorf("handler overran its %s", handlerTimeout)
	}
	return result, err
}

// call sends a JSON request with a fresh token, signing in again once on 401.
func (b *Bot) call(ctx context.Context, method, path string, body, out any) (int, error) {
	for attempt := 0; ; attempt++ {
		token, err := b.accessToken(ctx, attempt > 0)
		if err != nil {
			return 0, err
		}
		var reader io.Reader
		if body != nil {
			data, err := json.Marshal(body)
			if err != nil {
				return 0, err
			}
			reader = bytes.NewReader(data)
		}
		req, err := http.NewRequestWithContext(ctx, method, b.cfg.BaseURL+path, reader)
		if err != nil {
			return 0, err
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := b.cfg.HTTPClient.Do(req)
		if err != nil {
			return 0, err
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		resp.Body.Close()
		if err != nil {
			return 0, err
		}
		if resp.StatusCode == http.StatusUnauthorized && attempt == 0 {
			continue
		}
		if resp.StatusCode == http.StatusOK && out != nil {
			if err := json.Unmarshal(data, out); err != nil {
				return resp.StatusCode, fmt.Errorf("decoding %s %s: %w", method, path, err)
			}
		}
		return resp.StatusCode, nil
	}
}

// getJSON reads a document that needs no token.
func (b *Bot) getJSON(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.cfg.BaseURL+path, nil)
	if err != nil {
		return err
	}
	resp, err := b.cfg.HTTPClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s answered %d", path, resp.StatusCode)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(out)
}

// accessToken returns a service token, signing in when there is none, it is about to expire, or force.
func (b *Bot) accessToken(ctx context.Context, force bool) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !force && b.token != "" && time.Until(b.tokenUntil) > time.Minute {
		return b.token, nil
	}
	if b.audience == "" {
		// The service names its token endpoint by its own base address, which may not be the address
		// this bot reaches it by (localhost for 127.0.0.1, a proxy): ask it.
		var info struct{ TokenExchangeAudience string }
		if err := b.getJSON(ctx, "/api/info", &info); err != nil {
			return "", fmt.Errorf("reading the token audience: %w", err)
		}
		b.audience = info.TokenExchangeAudience
	}
	now := time.Now()
	claims, err := jwt.NewBuilder().Issuer(b.cfg.AccountID).Subject(b.cfg.AccountID).Audience([]string{b.audience}).
		IssuedAt(now).Expiration(now.Add(2 * time.Minute)).JwtID(uuid.NewString()).Build()
	if err != nil {
		return "", err
	}
	key, err := b.cfg.Key.Clone()
	if err != nil {
		return "", err
	}
	if err := key.Set(jwk.KeyIDKey, b.kid); err != nil {
		return "", err
	}
	alg := jwa.SignatureAlgorithm(key.Algorithm().String())
	if alg == "" {
		alg = defaultAlgorithm(key)
	}
	signed, err := jwt.Sign(claims, jwt.WithKey(alg, key))
	if err != nil {
		return "", fmt.Errorf("signing the assertion: %w", err)
	}
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {string(signed)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.cfg.BaseURL+"/auth/token", bytes.NewReader([]byte(form.Encode())))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := b.cfg.HTTPClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&tok); err != nil {
		return "", fmt.Errorf("decoding the token response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("sign-in refused: %s: %s", tok.Error, tok.Description)
	}
	b.token, b.tokenUntil = tok.AccessToken, now.Add(time.Duration(tok.ExpiresIn)*time.Second)
	return b.token, nil
}

func defaultAlgorithm(key jwk.Key) jwa.SignatureAlgorithm {
	switch key.KeyType() {
	case jwa.RSA:
		return jwa.RS256
	case jwa.OKP:
		return jwa.EdDSA
	default:
		return jwa.ES256
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
