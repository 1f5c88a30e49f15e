// Package loadtest is hubd's load benchmark: it starts a hubd process against a fresh database, drives
// the API from many concurrent clients, runs the same work as raw SQL over pgx (and, where etcd is
// installed, as etcd puts and gets) in the same run, and prints the figures side by side with their
// ratios. It is how a regression of the write or read path is caught; docs/performance.md records its
// figures.
package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// Config says what to run.
type Config struct {
	DatabaseURL string         // the PostgreSQL server; the run creates and drops its own database on it
	Hubd        string         // the hubd binary to start
	Etcd        string         // the etcd binary ("" or not found: the etcd column is left out)
	Concurrency int            // concurrent clients per workload
	Duration    time.Duration  // how long each throughput workload runs (after a warm-up of a tenth of it)
	Units       int            // Units written and read by the data workloads
	ListUnits   int            // Units the list workloads page over
	Rounds      int            // event round trips measured one after another
	ProfileDir  string         // when set, a CPU profile of hubd during each workload is written there
	Only        *regexp.Regexp // when set, only the workloads whose names it matches run
	// LongPollModes are the hubd long-poll modes the fan-out benchmark runs in, one after the other
	// (hubd --long-poll-mode; "" leaves the flag out, for builds before it).
	LongPollModes []string
	Out           io.Writer
}

// database is the database the run creates on the configured server: the process's own, so runs from
// several checkouts on one server do not drop each other's.
var database = "hubd_loadtest_" + strconv.Itoa(os.Getpid())

// Run runs every workload and prints the table.
func Run(ctx context.Context, cfg Config) error {
	if cfg.ProfileDir != "" {
		if err := os.MkdirAll(cfg.ProfileDir, 0o755); err != nil {
			return err
		}
	}
	dbURL, err := freshDatabase(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer dropDatabase(cfg.DatabaseURL)
	fmt.Fprintf(cfg.Out, "hubd load test: %d concurrent clients, %s per workload, %d Units written, %d Units listed\n",
		cfg.Concurrency, cfg.Duration, cfg.Units, cfg.ListUnits)
	fmt.Fprintf(cfg.Out, "machine: %s\n\n", machine())

	srv, err := startServer(ctx, cfg.Hubd, dbURL)
	if err != nil {
		return err
	}
	defer srv.stop()
	token, err := srv.mintToken(ctx, cfg.Hubd, dbURL, "loadtest", "loadtest")
	if err != nil {
		return err
	}
	c := newClient(srv.base, token, cfg.Concurrency)
	raw, err := openRaw(ctx, dbURL, cfg.Concurrency)
	if err != nil {
		return err
	}
	defer raw.close()
	var kv *etcdServer
	if cfg.Etcd != "" {
		if path, err := exec.LookPath(cfg.Etcd); err == nil {
			if kv, err = startEtcd(ctx, path, cfg.Concurrency); err != nil {
				return err
			}
			defer kv.stop()
		}
	}
	if kv == nil {
		fmt.Fprintf(cfg.Out, "etcd: %q not found; the etcd column is left out (make loadtest installs etcd-server where it can)\n\n", cfg.Etcd)
	}

	w, err := seed(ctx, cfg, c, raw)
	if err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	t := &table{out: cfg.Out, etcd: kv != nil, srv: srv}
	t.header()
	for _, wl := range w.workloads(kv) {
		if cfg.Only != nil && !cfg.Only.MatchString(wl.name) {
			continue
		}
		if err := t.run(ctx, cfg, wl); err != nil {
			return fmt.Errorf("%s: %w", wl.name, err)
		}
	}
	return nil
}

// freshDatabase drops and creates the run's database on the server serverURL names and returns its URL;
// dropDatabase drops it when the run is over.
func freshDatabase(ctx context.Context, serverURL string) (string, error) {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return "", fmt.Errorf("connecting to %s: %w", serverURL, err)
	}
	defer conn.Close(ctx)
	for _, stmt := range []string{"DROP DATABASE IF EXISTS " + database + " WITH (FORCE)", "CREATE DATABASE " + database} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return "", fmt.Errorf("%s: %w", stmt, err)
		}
	}
	u, err := url.Parse(serverURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", errors.New("the database URL must be a postgres:// URL")
	}
	u.Path = "/" + database
	return u.String(), nil
}

func dropDatabase(serverURL string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+database+" WITH (FORCE)")
}
