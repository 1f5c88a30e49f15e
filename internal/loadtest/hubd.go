package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// server is a hubd process started for the run.
type server struct {
	cmd         *exec.Cmd
	base        string
	debug       string // the profiler's address
	databaseURL string
}

// startServer starts `hubd serve` on a free loopback port against databaseURL, with args added to its
// flags, and waits until it is ready.
func startServer(ctx context.Context, bin, databaseURL string, args ...string) (*server, error) {
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	debug, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, append([]string{"serve", "--addr", addr, "--database-url", databaseURL, "--log-level", "warn", "--debug-addr", debug}, args...)...)
	cmd.Env = append(os.Environ(), "HUBD_MAX_IN_FLIGHT=100000")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	s := &server{cmd: cmd, base: "http://" + addr, debug: debug, databaseURL: databaseURL}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(s.base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	s.stop()
	return nil, fmt.Errorf("hubd did not become ready at %s within a minute", s.base)
}

// profile records a CPU profile of the server for d into file, in the background; wait for the returned
// channel before reading the file.
func (s *server) profile(d time.Duration, file string) <-chan error {
	done := make(chan error, 1)
	go func() {
		resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", s.debug, int(d.Seconds())))
		if err != nil {
			done <- err
			return
		}
		defer resp.Body.Close()
		f, err := os.Create(file)
		if err == nil {
			_, err = io.Copy(f, resp.Body)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		done <- err
	}()
	return done
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
	}
}

// mintToken asks the hubd binary for an admin token of a new organization, issued by the server s.
func (s *server) mintToken(ctx context.Context, bin, databaseURL, org, user string) (string, error) {
	out, err := exec.CommandContext(ctx, bin, "token", "--org", org, "--user", user, "--role", "admin",
		"--database-url", databaseURL, "--base-url", s.base).Output()
	if err != nil {
		return "", fmt.Errorf("hubd token: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// client calls the API as one admin, over keep-alive connections (no contract validation: the figures are
// the service's).
type client struct {
	base, token string
	http        *http.Client
}

func newClient(base, token string, conns int) *client {
	return &client{base: base, token: token, http: &http.Client{Transport: &http.Transport{
		MaxIdleConns: conns * 2, MaxIdleConnsPerHost: conns * 2, IdleConnTimeout: time.Minute}}}
}

// response is what a call returned.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request and reads the whole answer; a status other than want (when want is not 0) is an
// error.
func (c *client) do(ctx context.Context, method, path, contentType string, body []byte, header http.Header, want int) (response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return response{}, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	if want != 0 && resp.StatusCode != want {
		return response{}, fmt.Errorf("%s %s: status %d, want %d: %.300s", method, path, resp.StatusCode, want, out)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: out}, nil
}

// postJSON sends body as JSON and decodes the 200 answer into out (when out is not nil).
func (c *client) postJSON(ctx context.Context, path string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	r, err := c.do(ctx, http.MethodPost, path, "application/json", data, nil, http.StatusOK)
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal(r.body, out)
}

// cpuTime is the CPU time hubd has used so far (user and system, /proc; 10 ms resolution).
func (s *server) cpuTime() (time.Duration, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command's closing parenthesis: state is the first, utime the 12th, stime the 13th.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("reading %q: too few fields", stat)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// clockTicks is the kernel's USER_HZ, the unit of /proc's CPU times: 100 on every Linux Go runs on.
const clockTicks = 100

// ownCPUTime is the CPU time this process has used so far.
func ownCPUTime() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
