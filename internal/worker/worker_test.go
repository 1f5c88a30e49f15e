package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// fakeHub plays hubd's side of the worker contract: sign-in with short-lived tokens, the queue (pending
// operations become delivered when read), the long poll and the results.
type fakeHub struct {
	t        *testing.T
	srv      *httptest.Server
	workerID string
	secret   string

	mu        sync.Mutex
	tokenTTL  int // seconds
	tokens    map[string]time.Time
	signIns   int
	expired   int // requests refused for an expired or unknown token
	pending   []QueuedOperation
	delivered []QueuedOperation
	results   []ActionResult
	wake      chan struct{}
	failPolls int  // answer 503 to this many polls
	losePolls bool // deliver the next poll's operations but answer 503, as if the answer were lost
	refuse    map[string]int
	gets      int
	waiting   int // polls waiting now
	// hold delays the answer to an operation's Progressing report until the channel is closed.
	hold map[string]chan struct{}
	held chan string // the operations whose Progressing report is being held
}

func newFakeHub(t *testing.T) *fakeHub {
	f := &fakeHub{t: t, workerID: uuid.NewString(), secret: "bws_" + uuid.NewString(), tokenTTL: 600,
		tokens: map[string]time.Time{}, wake: make(chan struct{}), refuse: map[string]int{},
		hold: map[string]chan struct{}{}, held: make(chan string, 10)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /auth/worker", f.signIn)
	mux.HandleFunc("GET /api/bridge_worker/{id}/queued_operation", f.authed(f.list))
	mux.HandleFunc("POST /api/bridge_worker/{id}/queued_operation/poll", f.authed(f.poll))
	mux.HandleFunc("POST /api/bridge_worker/{id}/user_action_result", f.authed(f.result))
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeHub) signIn(w http.ResponseWriter, r *http.Request) {
	var creds struct{ WorkerID, Secret string }
	if err := json.NewDecoder(r.Body).Decode(&creds); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if creds.WorkerID != f.workerID || creds.Secret != f.secret {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":"invalid_client","error_description":"unknown WorkerID or wrong Secret"}`)
		return
	}
	f.signIns++
	tok := fmt.Sprintf("tok-%d", f.signIns)
	f.tokens[tok] = time.Now().Add(time.Duration(f.tokenTTL) * time.Second)
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": f.tokenTTL})
}

func (f *fakeHub) authed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		until, ok := f.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		if !ok || time.Now().After(until) {
			f.expired++
			f.mu.Unlock()
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		f.mu.Unlock()
		if r.PathValue("id") != f.workerID {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		h(w, r)
	}
}

func (f *fakeHub) list(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	f.delivered = append(f.delivered, f.pending...)
	f.pending = nil
	writeJSON(w, f.delivered)
}

func (f *fakeHub) poll(w http.ResponseWriter, r *http.Request) {
	var body struct{ TimeoutSeconds int }
	require.NoError(f.t, json.NewDecoder(r.Body).Decode(&body))
	deadline := time.After(time.Duration(body.TimeoutSeconds) * time.Second)
	for {
		f.mu.Lock()
		if f.failPolls > 0 {
			f.failPolls--
			f.mu.Unlock()
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if len(f.pending) > 0 || len(f.delivered) > 0 {
			// As hubd does, a poll answers every outstanding operation, Delivered ones again too.
			f.delivered, f.pending = append(f.delivered, f.pending...), nil
			ops := append([]QueuedOperation(nil), f.delivered...)
			lose := f.losePolls
			f.losePolls = false
			f.mu.Unlock()
			if lose {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			writeJSON(w, ops)
			return
		}
		wake := f.wake
		f.waiting++
		f.mu.Unlock()
		var timedOut bool
		select {
		case <-wake:
		case <-deadline:
			timedOut = true
		case <-r.Context().Done():
			timedOut = true
		}
		f.mu.Lock()
		f.waiting--
		f.mu.Unlock()
		if timedOut {
			writeJSON(w, []QueuedOperation{})
			return
		}
	}
}

func (f *fakeHub) result(w http.ResponseWriter, r *http.Request) {
	var res ActionResult
	require.NoError(f.t, json.NewDecoder(r.Body).Decode(&res))
	f.mu.Lock()
	if ch := f.hold[res.QueuedOperationID]; ch != nil && res.Status == StatusProgressing {
		f.mu.Unlock()
		f.held <- res.QueuedOperationID
		<-ch
		f.mu.Lock()
	}
	defer f.mu.Unlock()
	// Once reported (Progressing) or refused (cancelled), an operation is no longer outstanding.
	for i, op := range f.delivered {
		if op.QueuedOperationID == res.QueuedOperationID {
			f.delivered = append(f.delivered[:i:i], f.delivered[i+1:]...)
			break
		}
	}
	if status := f.refuse[res.QueuedOperationID]; status != 0 {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{"Message":"the operation was cancelled"}`)
		return
	}
	f.results = append(f.results, res)
	writeJSON(w, map[string]any{})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// enqueue queues an operation and wakes waiting polls.
func (f *fakeHub) enqueue(op QueuedOperation) QueuedOperation {
	f.mu.Lock()
	defer f.mu.Unlock()
	if op.QueuedOperationID == "" {
		op.QueuedOperationID = uuid.NewString()
	}
	op.BridgeWorkerID, op.Status, op.CreatedAt = f.workerID, "Pending", time.Now().UTC()
	f.pending = append(f.pending, op)
	close(f.wake)
	f.wake = make(chan struct{})
	return op
}

// final waits for the final result of an operation and returns it.
func (f *fakeHub) final(op QueuedOperation) ActionResult {
	f.t.Helper()
	var found ActionResult
	require.Eventually(f.t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, r := range f.results {
			if r.QueuedOperationID == op.QueuedOperationID && r.Status != StatusProgressing {
				found = r
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond, "no final result for %s %s", op.Action, op.UnitSlug)
	return found
}

// waitPolling waits until the worker waits in a poll.
func (f *fakeHub) waitPolling() {
	f.t.Helper()
	require.Eventually(f.t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.waiting > 0
	}, 10*time.Second, 5*time.Millisecond, "the worker does not poll")
}

// statuses lists the statuses reported for an operation, in order.
func (f *fakeHub) statuses(op QueuedOperation) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.results {
		if r.QueuedOperationID == op.QueuedOperationID {
			out = append(out, r.Status)
		}
	}
	return out
}

// start runs a worker on dir against the fake until the test ends.
func (f *fakeHub) start(t *testing.T, dir string, adjust ...func(*Config)) {
	cfg := Config{BaseURL: f.srv.URL, WorkerID: f.workerID, Secret: f.secret, Dir: dir, PollSeconds: 1,
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	for _, a := range adjust {
		a(&cfg)
	}
	w, err := New(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

func apply(space, unit, data string) QueuedOperation {
	return QueuedOperation{UnitID: uuid.NewString(), SpaceID: uuid.NewString(), Action: "Apply", ToolchainType: "AppConfig/Env",
		SpaceSlug: space, UnitSlug: unit, RevisionNum: 1, Data: []byte(data)}
}

func withAction(op QueuedOperation, action string) QueuedOperation {
	op.QueuedOperationID, op.Action, op.Data = uuid.NewString(), action, nil
	return op
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	info, err := os.Stat(path)
	require.NoError(t, err)
	return info.Sys().(*syscall.Stat_t).Ino
}

// TestApplyRefreshDestroy: apply writes the file (creating the Space folder), a second apply replaces it
// by rename (an open reader keeps the whole old file; no temporary file is left), refresh reads back a
// hand edit, destroy removes it, and a refresh of the missing file fails without stopping the worker.
func TestApplyRefreshDestroy(t *testing.T) {
	f := newFakeHub(t)
	dir := t.TempDir()
	f.start(t, dir)
	path := filepath.Join(dir, "dev", "app.env")

	first := f.enqueue(apply("dev", "app", "PORT=8080\n"))
	res := f.final(first)
	require.Equal(t, StatusCompleted, res.Status, res.Message)
	require.Equal(t, []string{StatusProgressing, StatusCompleted}, f.statuses(first))
	require.Equal(t, first.UnitID, res.UnitID)
	require.Equal(t, first.SpaceID, res.SpaceID)
	require.Equal(t, "Apply", res.Action)
	require.Equal(t, int64(1), res.RevisionNum)
	require.NotNil(t, res.TerminatedAt)
	require.False(t, res.StartedAt.After(*res.TerminatedAt))
	require.Contains(t, res.Message, path)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "PORT=8080\n", string(data))

	old, err := os.Open(path)
	require.NoError(t, err)
	defer old.Close()
	before := inode(t, path)
	second := apply("dev", "app", "PORT=9090\nDEBUG=1\n")
	second.UnitID, second.SpaceID, second.RevisionNum = first.UnitID, first.SpaceID, 2
	second = f.enqueue(second)
	require.Equal(t, StatusCompleted, f.final(second).Status)
	data, err = os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "PORT=9090\nDEBUG=1\n", string(data))
	require.NotEqual(t, before, inode(t, path), "the file was rewritten in place, not replaced")
	kept, err := io.ReadAll(old)
	require.NoError(t, err)
	require.Equal(t, "PORT=8080\n", string(kept), "a reader of the old file saw it change")
	entries, err := os.ReadDir(filepath.Join(dir, "dev"))
	require.NoError(t, err)
	require.Len(t, entries, 1, "a temporary file was left behind")

	require.NoError(t, os.WriteFile(path, []byte("PORT=9091\n"), 0o644))
	refresh := f.enqueue(withAction(second, "Refresh"))
	res = f.final(refresh)
	require.Equal(t, StatusCompleted, res.Status)
	require.Equal(t, "PORT=9091\n", string(res.Data))

	destroy := f.enqueue(withAction(second, "Destroy"))
	require.Equal(t, StatusCompleted, f.final(destroy).Status)
	require.NoFileExists(t, path)

	missing := f.enqueue(withAction(second, "Refresh"))
	imp := f.enqueue(apply("dev", "other", "A=1\n"))
	res = f.final(missing)
	require.Equal(t, StatusFailed, res.Status)
	require.Contains(t, res.Message, "does not exist")
	require.Empty(t, res.Data)
	require.Equal(t, StatusCompleted, f.final(imp).Status, "the worker stopped after a failure")

	// Destroying what is absent is done already.
	again := f.enqueue(withAction(second, "Destroy"))
	res = f.final(again)
	require.Equal(t, StatusCompleted, res.Status)
	require.Contains(t, res.Message, "already absent")
}

// TestImportReadsTheFile: Import reports the file as Data, like Refresh.
func TestImportReadsTheFile(t *testing.T) {
	f := newFakeHub(t)
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "prod"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prod", "web.yaml"), []byte("replicas: 3\n"), 0o644))
	f.start(t, dir)
	op := apply("prod", "web", "")
	op.Action, op.ToolchainType = "Import", "Kubernetes/YAML"
	res := f.final(f.enqueue(op))
	require.Equal(t, StatusCompleted, res.Status)
	require.Equal(t, "replicas: 3\n", string(res.Data))
}

// TestExtensions: each ToolchainType has its extension; one the worker does not serve, an unknown
// action and a Slug that would leave the directory fail, and nothing is written for them.
func TestExtensions(t *testing.T) {
	f := newFakeHub(t)
	dir := t.TempDir()
	f.start(t, dir)
	for toolchain, ext := range map[string]string{"Kubernetes/YAML": "yaml", "AppConfig/YAML": "yaml", "AppConfig/JSON": "json",
		"AppConfig/TOML": "toml", "AppConfig/INI": "ini", "AppConfig/Properties": "properties", "AppConfig/Env": "env", "AppConfig/Text": "txt"} {
		op := apply("s", "u-"+strings.ReplaceAll(strings.ToLower(toolchain), "/", "-"), toolchain)
		op.ToolchainType = toolchain
		require.Equal(t, StatusCompleted, f.final(f.enqueue(op)).Status)
		data, err := os.ReadFile(filepath.Join(dir, "s", op.UnitSlug+"."+ext))
		require.NoError(t, err, toolchain)
		require.Equal(t, toolchain, string(data))
	}

	odd := apply("s", "odd", "x")
	odd.ToolchainType = "Terraform/HCL"
	res := f.final(f.enqueue(odd))
	require.Equal(t, StatusFailed, res.Status)
	require.Contains(t, res.Message, `ToolchainType "Terraform/HCL"`)

	res = f.final(f.enqueue(withAction(apply("s", "u", ""), "Explode")))
	require.Equal(t, StatusFailed, res.Status)
	require.Contains(t, res.Message, `"Explode"`)

	for _, slug := range []string{"..", "../x", "a/b", ""} {
		res = f.final(f.enqueue(apply(slug, "u", "x")))
		require.Equal(t, StatusFailed, res.Status, slug)
		require.Contains(t, res.Message, "cannot name a file")
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the Space folder s")
}

// TestDryRun: a dry-run apply writes nothing and says what it would write; a dry-run destroy keeps the
// file.
func TestDryRun(t *testing.T) {
	f := newFakeHub(t)
	dir := t.TempDir()
	f.start(t, dir)
	path := filepath.Join(dir, "dev", "app.env")

	op := apply("dev", "app", "PORT=8080\n")
	op.DryRun = true
	res := f.final(f.enqueue(op))
	require.Equal(t, StatusCompleted, res.Status)
	require.Contains(t, res.Message, "dry run: would create "+path)
	require.Contains(t, res.Message, "PORT=8080\n")
	require.NoDirExists(t, filepath.Join(dir, "dev"))

	op.DryRun = false
	op.QueuedOperationID = ""
	require.Equal(t, StatusCompleted, f.final(f.enqueue(op)).Status)
	op.DryRun, op.QueuedOperationID, op.Data = true, "", []byte("PORT=1\n")
	res = f.final(f.enqueue(op))
	require.Contains(t, res.Message, "would replace")
	destroy := withAction(op, "Destroy")
	destroy.QueuedOperationID = ""
	res = f.final(f.enqueue(destroy))
	require.Equal(t, StatusCompleted, res.Status)
	require.Contains(t, res.Message, "dry run: would remove")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "PORT=8080\n", string(data))
}

// TestOutstandingFirst: operations queued before the worker starts are carried out first, in creation
// order, and only then does it poll.
func TestOutstandingFirst(t *testing.T) {
	f := newFakeHub(t)
	dir := t.TempDir()
	var ops []QueuedOperation
	for i := range 5 {
		op := apply("dev", "app", fmt.Sprintf("N=%d\n", i))
		op.RevisionNum = int64(i + 1)
		ops = append(ops, f.enqueue(op))
	}
	f.start(t, dir)
	for _, op := range ops {
		require.Equal(t, StatusCompleted, f.final(op).Status)
	}
	f.mu.Lock()
	var order []int64
	for _, r := range f.results {
		if r.Status == StatusCompleted {
			order = append(order, r.RevisionNum)
		}
	}
	f.mu.Unlock()
	require.Equal(t, []int64{1, 2, 3, 4, 5}, order)
	data, err := os.ReadFile(filepath.Join(dir, "dev", "app.env"))
	require.NoError(t, err)
	require.Equal(t, "N=4\n", string(data))
}

// TestTokenRenewal: the worker signs in again before its token expires, so no request meets an expired
// token; a token hubd stops accepting (401) is replaced at once and the request goes through.
func TestTokenRenewal(t *testing.T) {
	f := newFakeHub(t)
	f.tokenTTL = 1
	dir := t.TempDir()
	f.start(t, dir)
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.signIns >= 4
	}, 10*time.Second, 10*time.Millisecond)
	f.mu.Lock()
	require.Zero(t, f.expired, "a request carried an expired token")
	f.tokenTTL = 600
	f.mu.Unlock()
	// Let the worker take a long-lived token, then revoke every token.
	time.Sleep(1500 * time.Millisecond)
	f.mu.Lock()
	f.tokens = map[string]time.Time{}
	f.mu.Unlock()
	time.Sleep(1500 * time.Millisecond) // the poll in flight ends; the next meets the revocation
	res := f.final(f.enqueue(apply("dev", "app", "A=1\n")))
	require.Equal(t, StatusCompleted, res.Status)
	f.mu.Lock()
	defer f.mu.Unlock()
	require.GreaterOrEqual(t, f.expired, 1, "the revoked token was never refused")
}

// TestBackoffAndResync: polls that fail are retried after a wait, and after a failure the worker reads
// its queue again, so operations a lost poll answer handed out are still carried out.
func TestBackoffAndResync(t *testing.T) {
	f := newFakeHub(t)
	dir := t.TempDir()
	f.start(t, dir)
	require.Equal(t, StatusCompleted, f.final(f.enqueue(apply("dev", "first", "A=1\n"))).Status)

	f.mu.Lock()
	f.failPolls = 3
	f.mu.Unlock()
	require.Equal(t, StatusCompleted, f.final(f.enqueue(apply("dev", "app", "A=1\n"))).Status)
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.failPolls == 0
	}, 10*time.Second, 5*time.Millisecond, "the failed polls were not retried")
	f.waitPolling()
	f.mu.Lock()
	f.losePolls = true
	gets := f.gets
	f.mu.Unlock()

	require.Equal(t, StatusCompleted, f.final(f.enqueue(apply("dev", "lost", "A=1\n"))).Status)
	f.mu.Lock()
	defer f.mu.Unlock()
	require.False(t, f.losePolls, "no poll answer was lost")
	require.Greater(t, f.gets, gets, "the queue was not read again after a failure")
}

// TestRefusedStart: an operation whose Progressing report hubd refuses (cancelled meanwhile) is not
// carried out, and the worker goes on with the next.
func TestRefusedStart(t *testing.T) {
	f := newFakeHub(t)
	dir := t.TempDir()
	f.start(t, dir)
	cancelled := apply("dev", "gone", "A=1\n")
	cancelled.QueuedOperationID = uuid.NewString()
	f.mu.Lock()
	f.refuse[cancelled.QueuedOperationID] = http.StatusNotFound
	f.mu.Unlock()
	f.enqueue(cancelled)
	next := f.enqueue(apply("dev", "next", "B=1\n"))
	require.Equal(t, StatusCompleted, f.final(next).Status)
	require.NoFileExists(t, filepath.Join(dir, "dev", "gone.env"))
}

// TestSignInRefused: a wrong secret stops the worker with an error saying so.
func TestSignInRefused(t *testing.T) {
	f := newFakeHub(t)
	w, err := New(Config{BaseURL: f.srv.URL, WorkerID: f.workerID, Secret: "wrong", Dir: t.TempDir(),
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = w.Run(ctx)
	require.ErrorIs(t, err, ErrSignInRefused)
	require.ErrorContains(t, err, "invalid_client")
}

// TestShutdown: ending Run's context ends a waiting poll at once.
func TestShutdown(t *testing.T) {
	f := newFakeHub(t)
	w, err := New(Config{BaseURL: f.srv.URL, WorkerID: f.workerID, Secret: f.secret, Dir: t.TempDir(), PollSeconds: 30,
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	require.Equal(t, StatusCompleted, f.final(f.enqueue(apply("dev", "app", "A=1\n"))).Status)
	f.waitPolling()
	began := time.Now()
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
		require.Less(t, time.Since(began), 2*time.Second)
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

// TestShutdownFinishesTheOperationInHand: an operation begun before the worker is told to stop is carried
// out and its outcome reported before Run returns.
func TestShutdownFinishesTheOperationInHand(t *testing.T) {
	f := newFakeHub(t)
	dir := t.TempDir()
	w, err := New(Config{BaseURL: f.srv.URL, WorkerID: f.workerID, Secret: f.secret, Dir: dir, PollSeconds: 1,
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	require.NoError(t, err)
	op := apply("dev", "app", "A=1\n")
	op.QueuedOperationID = uuid.NewString()
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the server's Close, which waits for the held handler
	f.mu.Lock()
	f.hold[op.QueuedOperationID] = release
	f.mu.Unlock()
	f.enqueue(op)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	select {
	case <-f.held: // its Progressing report is in flight
	case <-time.After(10 * time.Second):
		t.Fatal("the operation was not begun")
	}
	cancel()
	time.Sleep(50 * time.Millisecond)
	unblock()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	require.Equal(t, []string{StatusProgressing, StatusCompleted}, f.statuses(op))
	require.FileExists(t, filepath.Join(dir, "dev", "app.env"))
}

func TestNewNeedsEverything(t *testing.T) {
	_, err := New(Config{BaseURL: "http://x", WorkerID: "w", Dir: t.TempDir()})
	require.ErrorContains(t, err, "secret")
}
