// Command hubd-loadtest is hubd's load benchmark (`make loadtest`): it starts hubd against a fresh
// database on the configured PostgreSQL server, runs each workload through the API and as raw SQL over
// pgx (and etcd, when installed) in the same run, and prints a table of throughput, latencies and ratios.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"time"

	"github.com/hubd/hubd/internal/loadtest"
)

func main() {
	cfg := loadtest.Config{Out: os.Stdout}
	flag.StringVar(&cfg.DatabaseURL, "database-url", os.Getenv("DATABASE_URL"), "PostgreSQL server URL (DATABASE_URL); the run uses its own database on it")
	flag.StringVar(&cfg.Hubd, "hubd", "bin/hubd", "the hubd binary to start")
	flag.StringVar(&cfg.Etcd, "etcd", "etcd", "the etcd binary for the etcd baseline (left out when not found)")
	flag.IntVar(&cfg.Concurrency, "c", 16, "concurrent clients")
	flag.DurationVar(&cfg.Duration, "d", 10*time.Second, "duration of each workload")
	flag.IntVar(&cfg.Units, "units", 1000, "Units the data workloads write and read")
	flag.IntVar(&cfg.ListUnits, "list-units", 100_000, "Units the list workloads page over")
	flag.IntVar(&cfg.Rounds, "rounds", 200, "event round trips")
	flag.StringVar(&cfg.ProfileDir, "profile", "", "directory for a CPU profile of hubd during each workload (go tool pprof)")
	fanout := flag.Int("fanout", 0, "instead of the workloads, the event fan-out benchmark with this many waiting worker polls")
	modes := flag.String("long-poll-modes", "parked,goroutine", "with -fanout: the hubd long-poll modes to run in, one after the other (empty: hubd's default, the flag left out)")
	perWorker := flag.Int("per-worker", 50, "with -fanout: polls per BridgeWorker")
	soak := flag.Bool("soak", false, "instead of the workloads, the soak: a mixed workload of ordinary callers alone, then beside a caller sending abusive requests (-c callers, -d a phase, -units Units)")
	only := flag.String("run", "", "run only the workloads whose names match this regular expression (e.g. 'PUT|GET')")
	flag.Parse()
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			fmt.Fprintln(os.Stderr, "hubd-loadtest: -run:", err)
			os.Exit(2)
		}
		cfg.Only = re
	}
	if cfg.DatabaseURL == "" {
		fmt.Fprintln(os.Stderr, "hubd-loadtest: set DATABASE_URL or --database-url")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *fanout > 0 {
		if *modes != "" {
			cfg.LongPollModes = strings.Split(*modes, ",")
		}
		if err := loadtest.FanOut(ctx, cfg, *fanout, *perWorker); err != nil {
			fmt.Fprintln(os.Stderr, "hubd-loadtest:", err)
			os.Exit(1)
		}
		return
	}
	if *soak {
		if err := loadtest.Soak(ctx, cfg); err != nil {
			fmt.Fprintln(os.Stderr, "hubd-loadtest:", err)
			os.Exit(1)
		}
		return
	}
	if err := loadtest.Run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "hubd-loadtest:", err)
		os.Exit(1)
	}
}
