package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apitest"
)

// e2e drives a hubd and a `hubd worker` running as processes of the built binary.
type e2e struct {
	t     *testing.T
	bin   string
	base  string
	token string
}

// buildHubd builds this command into a temporary directory.
func buildHubd(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hubd")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Run(), "building hubd")
	return bin
}

// process starts the binary with args and stops it (SIGTERM) when the test ends, unless stopped before.
func (e *e2e) process(name string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(e.bin, args...)
	cmd.Env = append(os.Environ(), env...)
	log, err := os.Create(filepath.Join(e.t.TempDir(), name+".log"))
	require.NoError(e.t, err)
	cmd.Stdout, cmd.Stderr = log, log
	require.NoError(e.t, cmd.Start())
	e.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		}
		if e.t.Failed() {
			data, _ := os.ReadFile(log.Name())
			e.t.Logf("%s's log:\n%s", name, data)
		}
		log.Close()
	})
	return cmd
}

// stop ends a process as SIGTERM would on a user's machine and checks it exits cleanly.
func (e *e2e) stop(cmd *exec.Cmd) {
	require.NoError(e.t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(e.t, err, "the process did not exit cleanly on SIGTERM")
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		e.t.Fatal("the process did not stop on SIGTERM")
	}
}

// call sends a request to the API with the admin token; a string body is sent raw, anything else as JSON.
func (e *e2e) call(method, path string, body any, want int, out any) {
	e.t.Helper()
	var reader io.Reader
	contentType := "application/json"
	switch b := body.(type) {
	case nil:
	case string:
		reader, contentType = strings.NewReader(b), "text/plain"
	default:
		data, err := json.Marshal(b)
		require.NoError(e.t, err)
		reader = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, e.base+path, reader)
	require.NoError(e.t, err)
	req.Header.Set("Authorization", "Bearer "+e.token)
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	require.Equal(e.t, want, resp.StatusCode, "%s %s: %s", method, path, data)
	if out != nil {
		if s, ok := out.(*string); ok {
			*s = string(data)
			return
		}
		require.NoError(e.t, json.Unmarshal(data, out))
	}
}

type e2eOp struct{ QueuedOperationID, Status string }

// e2eEvent is a UnitEvent: what one report of the worker did.
type e2eEvent struct{ Status, Result, Message string }

// action starts an action on a Unit and waits until its worker has finished it, returning the final
// UnitEvent.
func (e *e2e) action(space, unit, action string, dryRun ...bool) e2eEvent {
	e.t.Helper()
	var op e2eOp
	e.call(http.MethodPost, "/api/space/"+space+"/unit/"+unit+"/"+action, map[string]any{"DryRun": len(dryRun) > 0 && dryRun[0]}, http.StatusOK, &op)
	return e.finished(space, unit, op.QueuedOperationID)
}

// finished waits until the operation is Completed or Failed, as a client does: reading the Unit's
// UnitEvents of that operation.
func (e *e2e) finished(space, unit, opID string) e2eEvent {
	e.t.Helper()
	var final e2eEvent
	require.Eventually(e.t, func() bool {
		var events []e2eEvent
		e.call(http.MethodGet, "/api/space/"+space+"/unit/"+unit+"/unit_event?where="+
			url.QueryEscape("QueuedOperationID = '"+opID+"'"), nil, http.StatusOK, &events)
		for _, ev := range events {
			if ev.Status == "Completed" || ev.Status == "Failed" {
				final = ev
				return true
			}
		}
		return false
	}, 30*time.Second, 50*time.Millisecond, "operation %s on %s/%s did not finish", opID, space, unit)
	return final
}

// TestWorkerEndToEnd runs hubd and the reference worker as separate processes: apply writes the Unit's
// file, a changed Unit applied again replaces it, a dry run leaves it, a hand edit is found by refresh and becomes the Unit's
// data, destroy removes the file, and operations queued while the worker is down reach it when it
// starts again, in order.
func TestWorkerEndToEnd(t *testing.T) {
	dbURL := apitest.NewDatabase(t)
	e := &e2e{t: t, bin: buildHubd(t)}
	addr := freeAddr(t)
	e.base = "http://" + addr
	e.process("hubd", []string{"DATABASE_URL=" + dbURL}, "serve", "--addr", addr, "--log-level", "warn")
	waitReady(t, e.base)
	out, err := exec.Command(e.bin, "token", "--database-url", dbURL, "--org", "acme", "--user", "alice").Output()
	require.NoError(t, err)
	e.token = strings.TrimSpace(string(out))

	var space struct{ SpaceID string }
	e.call(http.MethodPost, "/api/space", map[string]any{"Slug": "dev"}, http.StatusOK, &space)
	sp := space.SpaceID
	var bw struct{ BridgeWorkerID, Secret string }
	e.call(http.MethodPost, "/api/space/"+sp+"/bridge_worker", map[string]any{"Slug": "files"}, http.StatusOK, &bw)
	require.NotEmpty(t, bw.Secret)
	var target struct{ TargetID string }
	e.call(http.MethodPost, "/api/space/"+sp+"/target", map[string]any{"Slug": "files", "ToolchainType": "AppConfig/Env",
		"ProviderType": "Kubernetes", "BridgeWorkerID": bw.BridgeWorkerID}, http.StatusOK, &target)
	newUnit := func(slug, data string) string {
		var created struct{ Unit struct{ UnitID string } }
		e.call(http.MethodPost, "/api/space/"+sp+"/unit", map[string]any{"Slug": slug, "ToolchainType": "AppConfig/Env",
			"TargetID": target.TargetID}, http.StatusOK, &created)
		e.call(http.MethodPut, "/api/space/"+sp+"/unit/"+created.Unit.UnitID+"/data", data, http.StatusOK, nil)
		return created.Unit.UnitID
	}
	app := newUnit("app", "PORT=8080\n")

	dir := t.TempDir()
	secretFile := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secretFile, []byte(bw.Secret+"\n"), 0o600))
	startWorker := func() *exec.Cmd {
		return e.process("worker", nil, "worker", "--base-url", e.base, "--worker-id", bw.BridgeWorkerID,
			"--secret-file", secretFile, "--dir", dir, "--poll-seconds", "5", "--log-level", "debug")
	}
	worker := startWorker()
	file := filepath.Join(dir, "dev", "app.env")
	readFile := func(path string) string {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		return string(data)
	}

	require.Equal(t, "ApplyCompleted", e.action(sp, app, "apply").Result)
	require.Equal(t, "PORT=8080\n", readFile(file))

	e.call(http.MethodPut, "/api/space/"+sp+"/unit/"+app+"/data", "PORT=9090\nDEBUG=1\n", http.StatusOK, nil)
	require.Equal(t, "ApplyCompleted", e.action(sp, app, "apply").Result)
	require.Equal(t, "PORT=9090\nDEBUG=1\n", readFile(file))

	// A dry run writes nothing.
	e.call(http.MethodPut, "/api/space/"+sp+"/unit/"+app+"/data", "PORT=7\n", http.StatusOK, nil)
	dry := e.action(sp, app, "apply", true)
	require.Equal(t, "ApplyCompleted", dry.Result)
	require.Contains(t, dry.Message, "dry run: would replace")
	require.Equal(t, "PORT=9090\nDEBUG=1\n", readFile(file))

	// A hand edit is drift: refresh reads it back and it becomes the Unit's data.
	require.NoError(t, os.WriteFile(file, []byte("PORT=9091\nDEBUG=1\n"), 0o644))
	require.Equal(t, "RefreshAndDrifted", e.action(sp, app, "refresh").Result)
	var data string
	e.call(http.MethodGet, "/api/space/"+sp+"/unit/"+app+"/data", nil, http.StatusOK, &data)
	require.Equal(t, "PORT=9091\nDEBUG=1\n", data)

	require.Equal(t, "DestroyCompleted", e.action(sp, app, "destroy").Result)
	require.NoFileExists(t, file)
	gone := e.action(sp, app, "refresh")
	require.Equal(t, "Failed", gone.Status, "a refresh of a removed file")
	require.Contains(t, gone.Message, "does not exist")

	// Operations queued while the worker is down wait for it and arrive in the order they were made.
	e.stop(worker)
	web := newUnit("web", "REPLICAS=2\n")
	var queued []e2eOp
	for _, u := range []struct{ id, data string }{{app, "PORT=1\n"}, {web, ""}, {app, "PORT=2\n"}} {
		if u.data != "" {
			e.call(http.MethodPut, "/api/space/"+sp+"/unit/"+u.id+"/data", u.data, http.StatusOK, nil)
		}
		var op e2eOp
		e.call(http.MethodPost, "/api/space/"+sp+"/unit/"+u.id+"/apply", map[string]any{}, http.StatusOK, &op)
		require.Equal(t, "Pending", op.Status)
		queued = append(queued, op)
	}
	require.NoFileExists(t, file)
	startWorker()
	require.Equal(t, "Completed", e.finished(sp, app, queued[0].QueuedOperationID).Status)
	require.Equal(t, "Completed", e.finished(sp, web, queued[1].QueuedOperationID).Status)
	require.Equal(t, "Completed", e.finished(sp, app, queued[2].QueuedOperationID).Status)
	require.Equal(t, "PORT=2\n", readFile(file), "the later apply was carried out first")
	require.Equal(t, "REPLICAS=2\n", readFile(filepath.Join(dir, "dev", "web.env")))
}
