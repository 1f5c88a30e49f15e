package loadtest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// table prints one row per workload: hubd, the raw-SQL baseline, etcd, and hubd's throughput as a
// fraction of each.
type table struct {
	out  io.Writer
	etcd bool
	srv  *server
}

func (t *table) header() {
	h := "| operation | hubd ops/s | p50 | p99 | raw SQL ops/s | p50 | p99 | hubd/raw |"
	sep := "|---|---|---|---|---|---|---|---|"
	if t.etcd {
		h += " etcd ops/s | p50 | p99 | hubd/etcd |"
		sep += "---|---|---|---|"
	}
	fmt.Fprintln(t.out, h)
	fmt.Fprintln(t.out, sep)
}

func (t *table) run(ctx context.Context, cfg Config, wl workload) error {
	if wl.prepare != nil {
		if err := wl.prepare(ctx); err != nil {
			return fmt.Errorf("preparing: %w", err)
		}
	}
	run := func(fn op, round func(context.Context, int) (time.Duration, error)) (*Result, error) {
		switch {
		case wl.rounds && round != nil:
			r, err := rounds(ctx, cfg.Rounds, round)
			return &r, err
		case !wl.rounds && fn != nil:
			r, err := measure(ctx, cfg.Concurrency, cfg.Duration, fn)
			return &r, err
		}
		return nil, nil
	}
	var profiled <-chan error
	if cfg.ProfileDir != "" && !wl.rounds {
		profiled = t.srv.profile(cfg.Duration, filepath.Join(cfg.ProfileDir, fileName(wl.name)+".pprof"))
	}
	hubd, err := run(wl.hubd, wl.hubdRound)
	if err != nil {
		return fmt.Errorf("hubd: %w", err)
	}
	if profiled != nil {
		if err := <-profiled; err != nil {
			return fmt.Errorf("profiling hubd: %w", err)
		}
	}
	raw, err := run(wl.raw, wl.rawRound)
	if err != nil {
		return fmt.Errorf("raw SQL: %w", err)
	}
	row := "| " + wl.name + " | " + figures(hubd) + " | " + figures(raw) + " | " + ratio(hubd, raw, wl.rounds) + " |"
	if t.etcd {
		kv, err := run(wl.etcd, nil)
		if err != nil {
			return fmt.Errorf("etcd: %w", err)
		}
		row += " " + figures(kv) + " | " + ratio(hubd, kv, wl.rounds) + " |"
	}
	fmt.Fprintln(t.out, row)
	return nil
}

func figures(r *Result) string {
	if r == nil {
		return "— | — | —"
	}
	return fmt.Sprintf("%.0f | %s | %s", r.Rate(), ms(r.Quantile(0.5)), ms(r.Quantile(0.99)))
}

func ms(d time.Duration) string { return msNum(d) + " ms" }

// msNum is d in milliseconds, without the unit.
func msNum(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }

// ratio is hubd's throughput over the baseline's; for latencies measured one at a time (rounds), the
// baseline's median latency over hubd's, so that higher is better in both.
func ratio(hubd, base *Result, rounds bool) string {
	switch {
	case hubd == nil || base == nil || base.Rate() == 0:
		return "—"
	case rounds:
		return fmt.Sprintf("%.3fx", float64(base.Quantile(0.5))/float64(hubd.Quantile(0.5)))
	}
	return fmt.Sprintf("%.2fx", hubd.Rate()/base.Rate())
}

// fileName turns a workload's name into a file name.
func fileName(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, name)
}

// machine names where and when figures were measured: the platform, CPUs, processor and time.
func machine() string {
	return fmt.Sprintf("%s/%s, %d CPUs, %s; %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel(), time.Now().Format("2006-01-02 15:04"))
}

// cpuModel is the processor's name, for the record of where figures were measured.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
