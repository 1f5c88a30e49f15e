package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// Soak runs a mixed workload of ordinary callers (data reads and writes, list pages with a View, function
// invokes) twice on one hubd: alone, then while a caller of another organization sends the abusive
// requests hubd bounds (deeply nested and key-heavy bodies, a wide View over large data, a template that
// expands without end, a reader that never reads). It prints each kind's latencies in both phases, the
// ratio of their p99s, hubd's largest RSS in each phase and what the abuser was answered.
func Soak(ctx context.Context, cfg Config) error {
	dbURL, err := freshDatabase(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer dropDatabase(cfg.DatabaseURL)
	fmt.Fprintf(cfg.Out, "hubd soak: %d concurrent callers, %s a phase, %d Units\n", cfg.Concurrency, cfg.Duration, cfg.Units)
	fmt.Fprintf(cfg.Out, "machine: %s\n\n", machine())
	// The ordinary callers are one organization's: its invoke bound must not be what they measure.
	srv, err := startServer(ctx, cfg.Hubd, dbURL, "--max-invocations", fmt.Sprint(cfg.Concurrency))
	if err != nil {
		return err
	}
	defer srv.stop()
	var tokens [2]string // the ordinary callers' organization's, the abuser's
	for i, org := range []string{"loadtest", "abuser"} {
		if tokens[i], err = srv.mintToken(ctx, cfg.Hubd, dbURL, org, org); err != nil {
			return err
		}
	}
	m, err := seedMixed(ctx, cfg, newClient(srv.base, tokens[0], cfg.Concurrency))
	if err != nil {
		return fmt.Errorf("seeding the callers: %w", err)
	}
	a, err := seedAbuser(ctx, newClient(srv.base, tokens[1], 4), srv.base)
	if err != nil {
		return fmt.Errorf("seeding the abuser: %w", err)
	}

	alone, aloneRSS, err := m.run(ctx, srv, nil)
	if err != nil {
		return fmt.Errorf("alone: %w", err)
	}
	abused, abusedRSS, err := m.run(ctx, srv, a)
	if err != nil {
		return fmt.Errorf("with the abuser: %w", err)
	}

	fmt.Fprintln(cfg.Out, "| operation | alone: ops | p50 | p99 | with the abuser: ops | p50 | p99 | p99 with / alone |")
	fmt.Fprintln(cfg.Out, "|---|---|---|---|---|---|---|---|")
	for _, kind := range mixedKinds {
		x, y := alone[kind], abused[kind]
		fmt.Fprintf(cfg.Out, "| %s | %d | %s | %s | %d | %s | %s | %.2fx |\n", kind, x.Ops, ms(x.Quantile(0.5)), ms(x.Quantile(0.99)),
			y.Ops, ms(y.Quantile(0.5)), ms(y.Quantile(0.99)), float64(y.Quantile(0.99))/float64(max(x.Quantile(0.99), time.Microsecond)))
	}
	fmt.Fprintf(cfg.Out, "\nhubd RSS, largest of the phase: alone %.0f MB, with the abuser %.0f MB\n\n", aloneRSS, abusedRSS)
	fmt.Fprintln(cfg.Out, "| abusive request | answers |")
	fmt.Fprintln(cfg.Out, "|---|---|")
	for _, r := range a.requests {
		fmt.Fprintf(cfg.Out, "| %s | %s |\n", r.name, a.answers(r.name))
	}
	return nil
}

// mixedKinds are the ordinary callers' operations, in the order the table lists them.
var mixedKinds = []string{"data GET", "data PUT", "list page with view=", "function invoke (get-value)"}

// mixed is the ordinary callers' world: one Space of Kubernetes Units and a View of them.
type mixed struct {
	cfg   Config
	c     *client
	space uuid.UUID
	units []uuid.UUID
	view  uuid.UUID
}

func seedMixed(ctx context.Context, cfg Config, c *client) (*mixed, error) {
	m := &mixed{cfg: cfg, c: c}
	var sp struct{ SpaceID uuid.UUID }
	if err := c.postJSON(ctx, "/api/space", map[string]any{"Slug": "soak"}, &sp); err != nil {
		return nil, err
	}
	m.space = sp.SpaceID
	var err error
	if m.units, err = createUnits(ctx, cfg, c, m.space); err != nil {
		return nil, err
	}
	var v struct{ ViewID uuid.UUID }
	err = c.postJSON(ctx, fmt.Sprintf("/api/space/%s/view", m.space), map[string]any{"Slug": "images", "Of": "Unit", "Columns": []any{
		map[string]any{"Name": "Slug", "ColumnSource": map[string]any{"MetadataAttribute": "Slug"}},
		map[string]any{"Name": "Replicas", "ColumnSource": map[string]any{"DataPath": map[string]any{"Path": "spec.replicas"}}},
		map[string]any{"Name": "Images", "ColumnSource": map[string]any{"DataPath": map[string]any{"Path": "spec.template.spec.containers.*.image"}}},
	}}, &v)
	m.view = v.ViewID
	return m, err
}

// run runs the mixed workload for cfg.Duration (after a tenth of it unmeasured), beside the abuser when
// there is one, and returns each kind's latencies and hubd's largest RSS meanwhile.
func (m *mixed) run(ctx context.Context, srv *server, a *abuser) (map[string]Result, float64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var peak atomic.Uint64
	go func() {
		for ctx.Err() == nil {
			if mb, err := srv.rssMB(); err == nil && uint64(mb) > peak.Load() {
				peak.Store(uint64(mb))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	var abuse sync.WaitGroup
	stopAbuse := make(chan struct{})
	if a != nil {
		abuse.Add(1)
		go func() { defer abuse.Done(); a.run(ctx, stopAbuse) }()
	}
	var mu sync.Mutex
	byKind := map[string][]time.Duration{}
	start := time.Now()
	warm, stop := start.Add(m.cfg.Duration/10), start.Add(m.cfg.Duration/10+m.cfg.Duration)
	var firstErr error
	var wg sync.WaitGroup
	for w := range m.cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(stop) && ctx.Err() == nil; i++ {
				kind := mixedKinds[(w+i)%len(mixedKinds)]
				t0 := time.Now()
				if err := m.op(ctx, kind, w, i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("%s: %w", kind, err)
					}
					mu.Unlock()
					cancel()
					return
				}
				if t0.After(warm) {
					mu.Lock()
					byKind[kind] = append(byKind[kind], time.Since(t0))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	close(stopAbuse) // the abuser's requests under way finish, so that what they were answered is known
	abuse.Wait()
	cancel()
	out := map[string]Result{}
	for kind, all := range byKind {
		out[kind] = latencies(all)
	}
	return out, float64(peak.Load()), firstErr
}

// op is one ordinary call of the given kind by worker w.
func (m *mixed) op(ctx context.Context, kind string, w, i int) error {
	u := m.units[(w*7919+i)%len(m.units)]
	data := fmt.Sprintf("/api/space/%s/unit/%s/data", m.space, u)
	switch kind {
	case "data GET":
		_, err := m.c.do(ctx, http.MethodGet, data, "", nil, nil, http.StatusOK)
		return err
	case "data PUT":
		_, err := m.c.do(ctx, http.MethodPut, data, "application/yaml", deployment(fmt.Sprintf("u-%05d", slices.Index(m.units, u)), 2+i%50), nil, http.StatusOK)
		return err
	case "list page with view=":
		q := url.Values{"view": {m.view.String()}, "limit": {"100"}, "order_by": {"Slug"}}
		_, err := m.c.do(ctx, http.MethodGet, fmt.Sprintf("/api/space/%s/unit?%s", m.space, q.Encode()), "", nil, nil, http.StatusOK)
		return err
	default:
		q := url.Values{"where": {fmt.Sprintf("UnitID = '%s'", u)}}
		body, _ := json.Marshal(map[string]any{"FunctionInvocations": []any{map[string]any{"FunctionName": "get-value",
			"Arguments": []any{map[string]any{"Value": "spec.replicas"}}}}})
		_, err := m.c.do(ctx, http.MethodPost, fmt.Sprintf("/api/space/%s/function/invoke?%s", m.space, q.Encode()), "application/json", body, nil, http.StatusOK)
		return err
	}
}

// abuser is one caller of another organization sending, one after another from a few connections, the
// requests that cost hubd more than they are worth unless bounded.
type abuser struct {
	c        *client
	base     string
	requests []abusive
	mu       sync.Mutex
	statuses map[string]map[string]int // request -> answer -> count
}

type abusive struct {
	name string
	send func(ctx context.Context) (string, error) // the answer, e.g. "400" or "not read: closed after 12 s"
}

func seedAbuser(ctx context.Context, c *client, base string) (*abuser, error) {
	a := &abuser{c: c, base: base, statuses: map[string]map[string]int{}}
	var sp struct{ SpaceID uuid.UUID }
	if err := c.postJSON(ctx, "/api/space", map[string]any{"Slug": "abuse"}, &sp); err != nil {
		return nil, err
	}
	space := fmt.Sprintf("/api/space/%s", sp.SpaceID)
	// Two Units of about 200 KB of JSON data and a View of 64 columns of every item of it.
	items := make([]map[string]any, 900)
	for i := range items {
		items[i] = map[string]any{"name": fmt.Sprintf("item-%d", i), "value": strings.Repeat("x", 200), "n": i}
	}
	big, _ := json.Marshal(map[string]any{"items": items})
	for i := range 2 {
		var u struct{ Unit struct{ UnitID uuid.UUID } }
		if err := c.postJSON(ctx, space+"/unit", map[string]any{"Slug": fmt.Sprintf("big-%d", i), "ToolchainType": "AppConfig/JSON"}, &u); err != nil {
			return nil, err
		}
		if _, err := c.do(ctx, http.MethodPut, fmt.Sprintf("%s/unit/%s/data", space, u.Unit.UnitID), "application/json", big, nil, http.StatusOK); err != nil {
			return nil, err
		}
	}
	columns := make([]any, 64)
	for i := range columns {
		columns[i] = map[string]any{"Name": fmt.Sprintf("c%d", i), "ColumnSource": map[string]any{"DataPath": map[string]any{"Path": "items.*"}}}
	}
	var view struct{ ViewID uuid.UUID }
	if err := c.postJSON(ctx, space+"/view", map[string]any{"Slug": "wide", "Of": "Unit", "Columns": columns}, &view); err != nil {
		return nil, err
	}
	wide := fmt.Sprintf("%s/unit?view=%s", space, view.ViewID)
	// 64 columns of the items' names: an answer of about 4 MB that hubd serves, for the reader that never
	// reads it.
	names := make([]any, 64)
	for i := range names {
		names[i] = map[string]any{"Name": fmt.Sprintf("n%d", i), "ColumnSource": map[string]any{"DataPath": map[string]any{"Path": "items.*.name"}}}
	}
	var narrower struct{ ViewID uuid.UUID }
	if err := c.postJSON(ctx, space+"/view", map[string]any{"Slug": "names", "Of": "Unit", "Columns": names}, &narrower); err != nil {
		return nil, err
	}
	large := fmt.Sprintf("%s/unit?view=%s", space, narrower.ViewID)
	var filter struct{ FilterID uuid.UUID }
	if err := c.postJSON(ctx, space+"/filter", map[string]any{"Slug": "f", "From": "Unit", "Where": "Slug = 'x'"}, &filter); err != nil {
		return nil, err
	}
	document := fmt.Sprintf("%s/filter/%s/document", space, filter.FilterID)
	read, err := c.do(ctx, http.MethodGet, document, "", nil, nil, http.StatusOK)
	if err != nil {
		return nil, err
	}
	deep := []byte(`{"Base": ` + string(read.body) + `, "Document": ` + strings.Repeat(`{"a": `, 9000) + `1` + strings.Repeat(`}`, 9000) + `}`)
	keys := make([]string, 90000)
	for i := range keys {
		keys[i] = fmt.Sprintf(`"k%05d": "%s"`, i, strings.Repeat("v", 30))
	}
	manyKeys := []byte(`{"Slug": "many", ` + strings.Join(keys, ", ") + `}`)
	// An Invocation whose WhereResource repeats a Parameter 100,000 times, invoked 12 times with a long value.
	bomb := map[string]any{"Slug": "bomb", "ToolchainType": "AppConfig/JSON", "Parameters": []any{map[string]any{"ParameterName": "a"}},
		"FunctionInvocations": []any{map[string]any{"FunctionName": "get-value", "WhereResource": strings.Repeat("{{.a}}", 100000),
			"Arguments": []any{map[string]any{"Value": "items"}}}}}

	status := func(r response, err error) (string, error) {
		if err != nil {
			return "", err
		}
		return fmt.Sprint(r.status), nil
	}
	a.requests = []abusive{
		{"document edit nested 9,000 levels", func(ctx context.Context) (string, error) {
			return status(c.do(ctx, http.MethodPost, document, "application/json", deep, nil, 0))
		}},
		{"body of 90,000 unknown keys (4 MB)", func(ctx context.Context) (string, error) {
			return status(c.do(ctx, http.MethodPost, space+"/tag", "application/json", manyKeys, nil, 0))
		}},
		{"list of 2 Units of 200 KB with a 64-column View of items.*", func(ctx context.Context) (string, error) {
			return status(c.do(ctx, http.MethodGet, wide, "", nil, nil, 0))
		}},
		{"Invocation expanding {{.a}} 100,000 times, invoked 12 times", func(ctx context.Context) (string, error) {
			body, _ := json.Marshal(bomb)
			r, err := c.do(ctx, http.MethodPost, space+"/invocation", "application/json", body, nil, 0)
			if err != nil || r.status != http.StatusOK {
				return status(r, err)
			}
			var inv struct{ InvocationID uuid.UUID }
			_ = json.Unmarshal(r.body, &inv)
			param := map[string]any{"InvocationID": inv.InvocationID, "Parameters": map[string]any{"a": strings.Repeat("y", 1000)}}
			calls, _ := json.Marshal(map[string]any{"ParameterizedInvocations": slices.Repeat([]any{param}, 12)})
			defer c.do(ctx, http.MethodDelete, fmt.Sprintf("%s/invocation/%s", space, inv.InvocationID), "", nil, nil, 0) //nolint:errcheck
			return status(c.do(ctx, http.MethodPost, space+"/function/invoke", "application/json", calls, nil, 0))
		}},
		{"a list answer of about 4 MB, never read", func(ctx context.Context) (string, error) {
			return a.neverRead(ctx, large)
		}},
	}
	return a, nil
}

// run sends the abusive requests in turn from four connections until stop is closed (or ctx ends).
func (a *abuser) run(ctx context.Context, stop <-chan struct{}) {
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; ctx.Err() == nil; i++ {
				select {
				case <-stop:
					return
				default:
				}
				r := a.requests[i%len(a.requests)]
				answer, err := r.send(ctx)
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					answer = "error: " + err.Error()
					if len(answer) > 60 {
						answer = answer[:60]
					}
				}
				a.mu.Lock()
				if a.statuses[r.name] == nil {
					a.statuses[r.name] = map[string]int{}
				}
				a.statuses[r.name][answer]++
				a.mu.Unlock()
				time.Sleep(time.Duration(rand.IntN(100)) * time.Millisecond)
			}
		}()
	}
	wg.Wait()
}

// answers summarizes what a request was answered: each answer with its count.
func (a *abuser) answers(name string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for answer, n := range a.statuses[name] {
		out = append(out, fmt.Sprintf("%s ×%d", answer, n))
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "none finished in the phase"
	}
	return strings.Join(out, ", ")
}

// neverRead sends a GET of path on a connection of its own and reads nothing for longer than hubd's
// default write timeout, then reads what is there: it reports the answer's status, how much of it was
// waiting and whether hubd had finished it (the connection closed after the whole answer). An answer that
// fits the sockets' buffers leaves hubd at once; a larger one stalls its write until --write-timeout.
func (a *abuser) neverRead(ctx context.Context, path string) (string, error) {
	conn, err := net.Dial("tcp", strings.TrimPrefix(a.base, "http://"))
	if err != nil {
		return "", err
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: hubd\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", path, a.c.token)
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case <-time.After(65 * time.Second):
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var status [12]byte // "HTTP/1.1 200"
	got, _ := io.ReadFull(conn, status[:])
	n, err := io.Copy(io.Discard, conn)
	n += int64(got)
	answer := strings.TrimPrefix(string(status[:got]), "HTTP/1.1 ")
	if err == nil {
		return fmt.Sprintf("%s, %d KB waiting, then closed by hubd", answer, n>>10), nil
	}
	return fmt.Sprintf("%s, %d KB waiting, connection still open", answer, n>>10), nil
}
