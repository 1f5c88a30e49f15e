// Package worker is hubd's reference bridge worker (`hubd worker`): it signs in as a BridgeWorker, takes
// the QueuedOperations hubd hands it, carries each out on a directory (one folder per Space, one file per
// Unit) and reports the outcome. It talks plain HTTP and JSON, as a worker in any language would.
package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// QueuedOperation is an operation hubd hands the worker.
type QueuedOperation struct {
	QueuedOperationID string
	UnitID            string
	SpaceID           string
	TargetID          string
	BridgeWorkerID    string
	Action            string // Apply, Destroy, Refresh or Import
	Status            string
	RevisionNum       int64
	DryRun            bool
	Data              []byte // base64 in JSON; for Apply, the bytes to apply
	UnitActionNum     int64
	ToolchainType     string
	UnitSlug          string
	SpaceSlug         string
	CreatedAt         time.Time
}

// ActionResult is what the worker reports about an operation.
type ActionResult struct {
	QueuedOperationID string
	UnitID            string
	SpaceID           string
	Action            string
	Status            string // Progressing, Completed or Failed
	Message           string
	StartedAt         time.Time
	TerminatedAt      *time.Time `json:",omitempty"`
	RevisionNum       int64
	Data              []byte `json:",omitempty"` // for Refresh and Import: the live configuration
	ResourceStatuses  map[string]any
}

// The statuses a worker reports.
const (
	StatusProgressing = "Progressing"
	StatusCompleted   = "Completed"
	StatusFailed      = "Failed"
)

// Config is what the worker needs.
type Config struct {
	BaseURL  string // hubd's base address, without /api
	WorkerID string // the BridgeWorker's ID
	Secret   string // the BridgeWorker's Secret
	Dir      string // the directory operations are carried out on
	// PollSeconds is the long poll's wait (30 when zero, at most 60).
	PollSeconds int
	// MinBackoff and MaxBackoff bound the wait after a failed request (1s and 30s when zero); it doubles
	// on each failure in a row and is jittered, so workers of a restarted hubd do not come back at once.
	MinBackoff, MaxBackoff time.Duration
	// ShutdownTimeout bounds finishing and reporting the operation in hand once Run's context ends (10s
	// when zero).
	ShutdownTimeout time.Duration
	HTTPClient      *http.Client
	Logger          *slog.Logger
}

// Worker runs the protocol.
type Worker struct {
	cfg    Config
	target *Target

	mu         sync.Mutex // guards the token
	token      string
	tokenRenew time.Time // when to sign in again: well before the token expires

	done map[string]bool // operations finished in this run, so a re-read queue does not repeat them
}

// ErrSignInRefused means hubd refused the worker's ID and Secret: retrying will not help.
var ErrSignInRefused = errors.New("sign-in refused")

// New checks the configuration and returns a Worker.
func New(cfg Config) (*Worker, error) {
	if cfg.BaseURL == "" || cfg.WorkerID == "" || cfg.Secret == "" || cfg.Dir == "" {
		return nil, errors.New("worker: the base URL, worker ID, secret and directory are required")
	}
	cfg.BaseURL = strings.TrimSuffix(cfg.BaseURL, "/")
	if cfg.PollSeconds <= 0 {
		cfg.PollSeconds = 30
	}
	cfg.PollSeconds = min(cfg.PollSeconds, 60) // hubd refuses longer polls
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = time.Second
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(30*time.Second, cfg.MinBackoff)
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 10 * time.Second
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	target, err := NewTarget(cfg.Dir)
	if err != nil {
		return nil, err
	}
	return &Worker{cfg: cfg, target: target, done: map[string]bool{}}, nil
}

// Run serves until ctx ends, then finishes the operation in hand and returns nil. It returns an error
// only when hubd refuses the worker's credentials.
func (w *Worker) Run(ctx context.Context) error {
	log := w.cfg.Logger
	log.Info("worker starting", "base_url", w.cfg.BaseURL, "worker_id", w.cfg.WorkerID, "dir", w.target.Dir())
	failures := 0
	// The queue is read at start and after every failed request: operations handed out by a poll whose
	// answer was lost are still outstanding, and the list returns them.
	resync := true
	for ctx.Err() == nil {
		var ops []QueuedOperation
		var err error
		if resync {
			ops, err = w.outstanding(ctx)
		} else {
			ops, err = w.poll(ctx)
		}
		if ctx.Err() != nil {
			break
		}
		if errors.Is(err, ErrSignInRefused) {
			return err
		}
		if err != nil {
			failures++
			wait := w.backoff(failures)
			log.Warn("talking to hubd failed; retrying", "err", err, "failures", failures, "retry_in", wait.Round(time.Millisecond).String())
			sleep(ctx, wait)
			resync = true
			continue
		}
		if failures > 0 {
			log.Info("connected to hubd again", "after_failures", failures)
		}
		failures, resync = 0, false
		progressed := false
		for _, op := range ops {
			progressed = w.handle(ctx, op) || progressed
		}
		if len(ops) > 0 && !progressed {
			// A poll answers every outstanding operation at once, so one the worker cannot take up would
			// come straight back: wait before asking again.
			sleep(ctx, w.backoff(1))
		}
	}
	log.Info("worker stopped")
	return nil
}

// backoff is the wait after the nth failure in a row: doubling from MinBackoff up to MaxBackoff, less up
// to a fifth at random.
func (w *Worker) backoff(n int) time.Duration {
	d := w.cfg.MinBackoff
	for i := 1; i < n && d < w.cfg.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, w.cfg.MaxBackoff)
	return d - time.Duration(rand.Int64N(int64(d)/5+1))
}

func (w *Worker) queuePath() string {
	return "/api/bridge_worker/" + url.PathEscape(w.cfg.WorkerID) + "/queued_operation"
}

// outstanding reads the worker's outstanding operations, in creation order.
func (w *Worker) outstanding(ctx context.Context) ([]QueuedOperation, error) {
	var ops []QueuedOperation
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	status, body, err := w.call(rctx, http.MethodGet, w.queuePath(), nil, &ops)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, httpError("reading the queue", status, body)
	}
	return ops, nil
}

// poll waits up to PollSeconds for new operations.
func (w *Worker) poll(ctx context.Context) ([]QueuedOperation, error) {
	var ops []QueuedOperation
	rctx, cancel := context.WithTimeout(ctx, time.Duration(w.cfg.PollSeconds)*time.Second+30*time.Second)
	defer cancel()
	status, body, err := w.call(rctx, http.MethodPost, w.queuePath()+"/poll", map[string]any{"TimeoutSeconds": w.cfg.PollSeconds}, &ops)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, httpError("polling", status, body)
	}
	return ops, nil
}

// handle carries out one operation and reports it: Progressing first, then Completed or Failed. Once
// begun, an operation is finished and reported even when ctx ends meanwhile (within ShutdownTimeout). It
// reports whether the operation was carried out.
func (w *Worker) handle(ctx context.Context, op QueuedOperation) bool {
	log := w.cfg.Logger.With("op", op.QueuedOperationID, "action", op.Action, "space", op.SpaceSlug, "unit", op.UnitSlug,
		"revision", op.RevisionNum, "dry_run", op.DryRun)
	if w.done[op.QueuedOperationID] {
		log.Debug("operation already finished in this run; skipped")
		return false
	}
	if ctx.Err() != nil {
		return false // not begun: it stays queued for the next run
	}
	started := time.Now().UTC()
	result := ActionResult{QueuedOperationID: op.QueuedOperationID, UnitID: op.UnitID, SpaceID: op.SpaceID, Action: op.Action,
		Status: StatusProgressing, StartedAt: started, RevisionNum: op.RevisionNum, ResourceStatuses: map[string]any{}}
	// Reporting is not cut short by shutdown, only bounded by it.
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(w.cfg.ShutdownTimeout, cancel)
		context.AfterFunc(rctx, func() { t.Stop() })
	})
	defer stop()

	if err := w.report(rctx, result); err != nil {
		// hubd refused it (cancelled, or not this worker's), or hubd is out of reach: either way not ours
		// to run now; an operation still outstanding comes back with the next read of the queue.
		log.Warn("reporting Progressing failed; the operation is not carried out", "err", err)
		return false
	}
	log.Info("operation started")
	outcome := w.target.Do(op)
	terminated := time.Now().UTC()
	result.Status, result.Message, result.Data, result.TerminatedAt = StatusCompleted, outcome.Message, outcome.Data, &terminated
	if outcome.Err != nil {
		result.Status, result.Message = StatusFailed, outcome.Err.Error()
	}
	if err := w.report(rctx, result); err != nil {
		log.Error("reporting the outcome failed", "status", result.Status, "err", err)
		return true
	}
	w.done[op.QueuedOperationID] = true
	if len(w.done) > 10000 {
		w.done = map[string]bool{op.QueuedOperationID: true}
	}
	if outcome.Err != nil {
		log.Warn("operation failed", "err", outcome.Err)
		return true
	}
	log.Info("operation completed", "message", outcome.Message)
	return true
}

// permanentError is an answer that retrying the same request will not change.
type permanentError struct{ error }

// report sends a result, retrying what may pass later (no connection, 429, 5xx) until ctx ends.
func (w *Worker) report(ctx context.Context, result ActionResult) error {
	path := "/api/bridge_worker/" + url.PathEscape(w.cfg.WorkerID) + "/user_action_result"
	for failures := 1; ; failures++ {
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		status, body, err := w.call(rctx, http.MethodPost, path, result, nil)
		cancel()
		switch {
		case err == nil && status == http.StatusOK:
			return nil
		case errors.Is(err, ErrSignInRefused):
			return err
		case err == nil && status != http.StatusTooManyRequests && status < 500:
			return permanentError{httpError("reporting "+result.Status, status, body)}
		case err == nil:
			err = httpError("reporting "+result.Status, status, body)
		}
		if ctx.Err() != nil {
			return err
		}
		wait := w.backoff(failures)
		w.cfg.Logger.Warn("reporting failed; retrying", "op", result.QueuedOperationID, "status", result.Status, "err", err, "retry_in", wait.Round(time.Millisecond).String())
		sleep(ctx, wait)
	}
}

// httpError describes an answer other than 200, with the message of hubd's error body when it has one.
func httpError(what string, status int, body []byte) error {
	var e struct{ Message string }
	if json.Unmarshal(body, &e) == nil && e.Message != "" {
		return fmt.Errorf("%s: hubd answered %d: %s", what, status, e.Message)
	}
	return fmt.Errorf("%s: hubd answered %d", what, status)
}

// call sends a JSON request with a fresh token, signing in again once on 401. It returns the status and
// body; out is filled from a 200 answer.
func (w *Worker) call(ctx context.Context, method, path string, body, out any) (int, []byte, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return 0, nil, err
		}
	}
	for attempt := 0; ; attempt++ {
		token, err := w.accessToken(ctx, attempt > 0)
		if err != nil {
			return 0, nil, err
		}
		var reader io.Reader
		if payload != nil {
			reader = bytes.NewReader(payload)
		}
		req, err := http.NewRequestWithContext(ctx, method, w.cfg.BaseURL+path, reader)
		if err != nil {
			return 0, nil, err
		}
		if payload != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := w.cfg.HTTPClient.Do(req)
		if err != nil {
			return 0, nil, err
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		resp.Body.Close()
		if err != nil {
			return 0, nil, err
		}
		if resp.StatusCode == http.StatusUnauthorized && attempt == 0 {
			continue // the token was revoked or hubd's keys changed: sign in again
		}
		if resp.StatusCode == http.StatusOK && out != nil {
			if err := json.Unmarshal(data, out); err != nil {
				return resp.StatusCode, data, fmt.Errorf("decoding the answer to %s %s: %w", method, path, err)
			}
		}
		return resp.StatusCode, data, nil
	}
}

// accessToken returns a service token, signing in when there is none, it is due for renewal, or force.
func (w *Worker) accessToken(ctx context.Context, force bool) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !force && w.token != "" && time.Now().Before(w.tokenRenew) {
		return w.token, nil
	}
	payload, err := json.Marshal(map[string]string{"WorkerID": w.cfg.WorkerID, "Secret": w.cfg.Secret})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.cfg.BaseURL+"/auth/worker", bytes.NewReader(payload))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	now := time.Now()
	resp, err := w.cfg.HTTPClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("signing in: %w", err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	decodeErr := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&tok)
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusBadRequest:
		return "", fmt.Errorf("%w: %s: %s (check the worker ID and secret)", ErrSignInRefused, tok.Error, tok.Description)
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("signing in: hubd answered %d", resp.StatusCode)
	case decodeErr != nil || tok.AccessToken == "":
		return "", fmt.Errorf("signing in: the answer holds no token")
	}
	lifetime := time.Duration(tok.ExpiresIn) * time.Second
	// Renew with a quarter of the lifetime (at most two minutes) to spare, so a token never expires
	// between being read here and reaching hubd.
	w.token, w.tokenRenew = tok.AccessToken, now.Add(lifetime-min(lifetime/4, 2*time.Minute))
	w.cfg.Logger.Debug("signed in", "expires_in", lifetime)
	return w.token, nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
