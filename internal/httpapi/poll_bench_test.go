package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/httpapi"
)

// benchClient sends JSON requests without contract validation, so the figures are the service's.
type benchClient struct {
	base, token string
	http        *http.Client
}

func (c benchClient) post(ctx context.Context, path string, body any) (int, []byte, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(data))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// leasedChannel creates a Channel subscribed to space.created and takes its lease; it returns the poll
// path and the claim token.
func leasedChannel(b *testing.B, c benchClient, spaceID, slug string) (string, string) {
	ctx := context.Background()
	base := "/api/space/" + spaceID + "/channel"
	status, body, err := c.post(ctx, base, map[string]any{"Slug": slug, "Commands": map[string]any{"noop": map[string]any{}},
		"Subscriptions": []map[string]any{{"EventTypes": []string{"space.created"}}}})
	if err != nil || status != http.StatusOK {
		b.Fatalf("creating a Channel: %d %s %v", status, body, err)
	}
	status, body, err = c.post(ctx, base+"/"+slug+"/lease", map[string]any{})
	if err != nil || status != http.StatusOK {
		b.Fatalf("taking the lease: %d %s %v", status, body, err)
	}
	var lease struct{ ClaimToken string }
	if err := json.Unmarshal(body, &lease); err != nil {
		b.Fatal(err)
	}
	return base + "/" + slug + "/poll", lease.ClaimToken
}

// BenchmarkLongPoll measures what idle long polls cost a replica and how fast a committed event reaches
// a waiting poll. Run with `make bench`; figures are recorded in docs/performance.md.
func BenchmarkLongPoll(b *testing.B) {
	// One account holds every poll here, so its per-caller limit is lifted.
	env := apitest.New(b, apitest.Options{HTTP: httpapi.Config{MaxInFlightPerCaller: 10_000}})
	c := benchClient{base: env.URL, token: env.Token("acme", "alice", auth.RoleAdmin),
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2000}}}
	status, body, err := c.post(context.Background(), "/api/space", map[string]any{"Slug": "bots"})
	if err != nil || status != http.StatusOK {
		b.Fatalf("creating the Space: %d %s %v", status, body, err)
	}
	var sp struct{ SpaceID string }
	if err := json.Unmarshal(body, &sp); err != nil {
		b.Fatal(err)
	}

	// Idle polls: the heap and goroutines a replica holds per waiting poll (client and server share the
	// process here, so the figure includes the client's side too: an upper bound). b.N is not used:
	// the measurement is one set of polls.
	b.Run("idle", func(b *testing.B) {
		const polls = 1000
		paths, tokens := make([]string, polls), make([]string, polls)
		for i := range paths {
			paths[i], tokens[i] = leasedChannel(b, c, sp.SpaceID, fmt.Sprintf("idle-%d-%04d", b.N, i))
		}
		before := heapAndGoroutines()
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for i := range paths {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, _ = c.post(ctx, paths[i], map[string]any{"ClaimToken": tokens[i], "TimeoutSeconds": 60})
			}()
		}
		time.Sleep(3 * time.Second) // every poll has read and is waiting
		after := heapAndGoroutines()
		if waiting := after.goroutines - before.goroutines; waiting < polls {
			b.Fatalf("only %d goroutines for %d polls: polls were refused or ended early", waiting, polls)
		}
		open := env.App.Store.Pool.Stat().AcquiredConns()
		cancel()
		wg.Wait()
		b.ReportMetric(float64(after.heap-before.heap)/polls, "heap-bytes/poll")
		b.ReportMetric(float64(after.goroutines-before.goroutines)/polls, "goroutines/poll")
		b.ReportMetric(float64(open), "db-conns-held")
	})

	// Latency: a Space is created (its event commits) while the poll waits; measured from the create
	// request's start to the poll's answer, so it includes the write itself.
	b.Run("event-to-delivery", func(b *testing.B) {
		path, token := leasedChannel(b, c, sp.SpaceID, fmt.Sprintf("latency-%d", b.N))
		ctx := context.Background()
		latencies := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			got := make(chan time.Time, 1)
			go func() {
				_, _, _ = c.post(ctx, path, map[string]any{"ClaimToken": token, "TimeoutSeconds": 30})
				got <- time.Now()
			}()
			time.Sleep(20 * time.Millisecond) // let the poll start waiting
			start := time.Now()
			if status, body, err := c.post(ctx, "/api/space", map[string]any{"Slug": fmt.Sprintf("s-%d-%d", b.N, i)}); err != nil || status != http.StatusOK {
				b.Fatalf("creating a Space: %d %s %v", status, body, err)
			}
			latencies = append(latencies, (<-got).Sub(start))
		}
		b.StopTimer()
		sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
		b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1000, "p99-ms")
	})
}

type footprint struct{ heap, goroutines int64 }

func heapAndGoroutines() footprint {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return footprint{heap: int64(m.HeapInuse), goroutines: int64(runtime.NumGoroutine())}
}
