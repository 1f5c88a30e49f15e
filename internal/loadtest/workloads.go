package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
)

// workload is one row of the table: the operation through hubd's API and the same work as raw SQL and
// as etcd where there is an equivalent.
type workload struct {
	name string
	// rounds: a latency measured one operation at a time (the event round trip, with hubdRound and
	// rawRound); otherwise a throughput at the configured concurrency.
	rounds              bool
	prepare             func(ctx context.Context) error
	hubd                op
	raw                 op
	etcd                op
	hubdRound, rawRound func(ctx context.Context, i int) (time.Duration, error)
}

// world is what seeding made: the Spaces and Units the workloads use.
type world struct {
	cfg        Config
	c          *client
	raw        *rawDB
	orgID      uuid.UUID
	dataSpace  uuid.UUID   // Units written and read through the API
	dataUnits  []uuid.UUID // in dataSpace
	rawSpace   uuid.UUID   // Units written and read by raw SQL
	rawUnits   []uuid.UUID // in rawSpace
	listSpace  uuid.UUID   // cfg.ListUnits Units for the list workloads
	botsSpace  uuid.UUID
	whereDeep  listPage // a deep page of the where list (through the API: its continue token)
	whereData  listPage
	etags      []string // of dataUnits' data, for the 304 workload
	pollPath   string
	claimToken string
}

// listPage is a page of a list reached by following continue tokens: the token for the API and the last
// row's keys for raw SQL.
type listPage struct {
	page     int
	token    string
	lastSlug string
	lastID   uuid.UUID
}

const (
	whereTier      = "Labels.tier = 'gold'"
	whereDataRepl  = "spec.replicas = 7"
	listPageLength = 100
)

func seed(ctx context.Context, cfg Config, c *client, raw *rawDB) (*world, error) {
	w := &world{cfg: cfg, c: c, raw: raw}
	var sp struct {
		SpaceID        uuid.UUID
		OrganizationID uuid.UUID
	}
	for _, s := range []struct {
		slug string
		id   *uuid.UUID
	}{{"data", &w.dataSpace}, {"raw", &w.rawSpace}, {"list", &w.listSpace}, {"bots", &w.botsSpace}} {
		if err := c.postJSON(ctx, "/api/space", map[string]any{"Slug": s.slug}, &sp); err != nil {
			return nil, err
		}
		*s.id, w.orgID = sp.SpaceID, sp.OrganizationID
	}
	var err error
	if w.dataUnits, err = createUnits(ctx, cfg, c, w.dataSpace); err != nil {
		return nil, err
	}
	if w.rawUnits, err = createUnits(ctx, cfg, c, w.rawSpace); err != nil {
		return nil, err
	}
	if err := raw.seedList(ctx, w.orgID, w.listSpace, cfg.ListUnits); err != nil {
		return nil, err
	}
	if w.whereDeep, err = w.followPages(ctx, url.Values{"where": {whereTier}}, raw.whereKeys); err != nil {
		return nil, err
	}
	if w.whereData, err = w.followPages(ctx, url.Values{"where_data": {whereDataRepl}}, raw.whereDataKeys); err != nil {
		return nil, err
	}
	return w, nil
}

// createUnits creates cfg.Units Kubernetes Units in a Space through the API, each with a first Revision.
func createUnits(ctx context.Context, cfg Config, c *client, spaceID uuid.UUID) ([]uuid.UUID, error) {
	ids := make([]uuid.UUID, cfg.Units)
	var next sync.Mutex
	i := 0
	var firstErr error
	var wg sync.WaitGroup
	for range cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				n := i
				i++
				stop := n >= len(ids) || firstErr != nil
				next.Unlock()
				if stop {
					return
				}
				slug := fmt.Sprintf("u-%05d", n)
				var out struct{ Unit struct{ UnitID uuid.UUID } }
				err := c.postJSON(ctx, fmt.Sprintf("/api/space/%s/unit", spaceID), map[string]any{"Slug": slug, "ToolchainType": "Kubernetes/YAML"}, &out)
				if err == nil {
					ids[n] = out.Unit.UnitID
					_, err = c.do(ctx, http.MethodPut, fmt.Sprintf("/api/space/%s/unit/%s/data", spaceID, ids[n]), "application/yaml", deployment(slug, 1), nil, http.StatusOK)
				}
				if err != nil {
					next.Lock()
					firstErr = err
					next.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return ids, firstErr
}

// deepPage is the middle page of the list workloads' matches (one Unit in ten matches).
func (w *world) deepPage() int { return max(2, w.cfg.ListUnits/10/listPageLength/2) }

// followPages follows a list of the list Space to its deep page and returns it.
func (w *world) followPages(ctx context.Context, q url.Values, rawKeys func(ctx context.Context, org, space uuid.UUID, offset int) (string, uuid.UUID, error)) (listPage, error) {
	q.Set("limit", strconv.Itoa(listPageLength))
	q.Set("order_by", "Slug")
	deep := w.deepPage()
	p := listPage{page: deep}
	for page := 1; page < deep; page++ {
		if p.token != "" {
			q.Set("continue", p.token)
		}
		r, err := w.c.do(ctx, http.MethodGet, fmt.Sprintf("/api/space/%s/unit?%s", w.listSpace, q.Encode()), "", nil, nil, http.StatusOK)
		if err != nil {
			return p, err
		}
		if p.token = r.header.Get("Service-Continue"); p.token == "" {
			return p, fmt.Errorf("the list %v ended at page %d, before page %d", q, page, deep)
		}
	}
	var err error
	p.lastSlug, p.lastID, err = rawKeys(ctx, w.orgID, w.listSpace, (deep-1)*listPageLength-1)
	return p, err
}

// leaseChannel makes a Channel in the bots Space subscribed to space.created and takes its lease.
func (w *world) leaseChannel(ctx context.Context) error {
	base := fmt.Sprintf("/api/space/%s/channel", w.botsSpace)
	if err := w.c.postJSON(ctx, base, map[string]any{"Slug": "events", "Commands": map[string]any{"noop": map[string]any{}},
		"Subscriptions": []map[string]any{{"EventTypes": []string{"space.created"}}}}, nil); err != nil {
		return err
	}
	var lease struct{ ClaimToken string }
	if err := w.c.postJSON(ctx, base+"/events/lease", map[string]any{}, &lease); err != nil {
		return err
	}
	w.pollPath, w.claimToken = base+"/events/poll", lease.ClaimToken
	// Events committed before the Channel existed but numbered after it (the raw baseline's, numbered by
	// hubd's sweep) are delivered first: drain them, so that each round waits for its own event.
	for {
		r, err := w.c.do(ctx, http.MethodPost, w.pollPath, "application/json",
			fmt.Appendf(nil, `{"ClaimToken": %q, "TimeoutSeconds": 1}`, w.claimToken), nil, 0)
		if err != nil {
			return err
		}
		if r.status == http.StatusNoContent {
			return nil
		}
	}
}

func (w *world) dataPath(i int) string {
	return fmt.Sprintf("/api/space/%s/unit/%s/data", w.dataSpace, w.dataUnits[i%len(w.dataUnits)])
}

// unitOf picks the Unit worker wk writes at its i-th operation: workers take disjoint Units, so writes
// measure throughput, not contention on one row.
func (w *world) unitOf(wk, i int) int { return (i*w.cfg.Concurrency + wk) % w.cfg.Units }

func (w *world) workloads(kv *etcdServer) []workload {
	c := w.c
	list := func(q url.Values, token string) op {
		q.Set("limit", strconv.Itoa(listPageLength))
		q.Set("order_by", "Slug")
		if token != "" {
			q.Set("continue", token)
		}
		path := fmt.Sprintf("/api/space/%s/unit?%s", w.listSpace, q.Encode())
		return func(ctx context.Context, _, _ int) error {
			_, err := c.do(ctx, http.MethodGet, path, "", nil, nil, http.StatusOK)
			return err
		}
	}
	// listAt is a page of the Units selected by param=expr: the first, or the deep one (deep); raw reads
	// the same page by keyset.
	listAt := func(param, expr string, deep *listPage, raw func(ctx context.Context, org, space uuid.UUID, slug string, id uuid.UUID) error) workload {
		name, token, slug, id := param+" list, page 1", "", "", uuid.Nil
		if deep != nil {
			name, token, slug, id = fmt.Sprintf("%s list, page %d", param, w.deepPage()), deep.token, deep.lastSlug, deep.lastID
		}
		return workload{name: name, hubd: list(url.Values{param: {expr}}, token),
			raw: func(ctx context.Context, _, _ int) error { return raw(ctx, w.orgID, w.listSpace, slug, id) }}
	}
	wls := []workload{
		{
			name: "data PUT (new Revision)",
			hubd: func(ctx context.Context, wk, i int) error {
				n := w.unitOf(wk, i)
				_, err := c.do(ctx, http.MethodPut, w.dataPath(n), "application/yaml", deployment(fmt.Sprintf("u-%05d", n), i+2), nil, http.StatusOK)
				return err
			},
			raw: func(ctx context.Context, wk, i int) error {
				n := w.unitOf(wk, i)
				return w.raw.putData(ctx, w.rawUnits[n], fmt.Sprintf("u-%05d", n), i+2)
			},
		},
		{
			name: "data GET",
			hubd: func(ctx context.Context, wk, i int) error {
				_, err := c.do(ctx, http.MethodGet, w.dataPath(w.unitOf(wk, i)), "", nil, nil, http.StatusOK)
				return err
			},
			raw: func(ctx context.Context, wk, i int) error {
				return w.raw.getData(ctx, w.orgID, w.rawUnits[w.unitOf(wk, i)])
			},
		},
		{
			name: "data GET, 304 by ETag",
			prepare: func(ctx context.Context) error {
				w.etags = make([]string, len(w.dataUnits))
				for i := range w.dataUnits {
					r, err := c.do(ctx, http.MethodGet, w.dataPath(i), "", nil, nil, http.StatusOK)
					if err != nil {
						return err
					}
					w.etags[i] = r.header.Get("ETag")
				}
				return nil
			},
			hubd: func(ctx context.Context, wk, i int) error {
				n := w.unitOf(wk, i)
				_, err := c.do(ctx, http.MethodGet, w.dataPath(n), "", nil, http.Header{"If-None-Match": {w.etags[n]}}, http.StatusNotModified)
				return err
			},
		},
		listAt("where", whereTier, nil, w.raw.whereList),
		listAt("where", whereTier, &w.whereDeep, w.raw.whereList),
		listAt("where_data", whereDataRepl, nil, w.raw.whereDataList),
		listAt("where_data", whereDataRepl, &w.whereData, w.raw.whereDataList),
		{
			name: "Space create",
			hubd: func(ctx context.Context, wk, i int) error {
				return c.postJSON(ctx, "/api/space", map[string]any{"Slug": fmt.Sprintf("api-%d-%d", wk, i)}, nil)
			},
			raw: func(ctx context.Context, wk, i int) error {
				return w.raw.createSpace(ctx, w.orgID, fmt.Sprintf("raw-%d-%d", wk, i))
			},
		},
		{
			name:   "event round trip (write to delivery)",
			rounds: true,
			// The Channel is made now, so that it starts after the Spaces created above.
			prepare: w.leaseChannel,
			hubdRound: func(ctx context.Context, i int) (time.Duration, error) {
				got := make(chan error, 1)
				var at time.Time
				go func() {
					r, err := c.do(ctx, http.MethodPost, w.pollPath, "application/json",
						fmt.Appendf(nil, `{"ClaimToken": %q, "TimeoutSeconds": 30}`, w.claimToken), nil, http.StatusOK)
					at = time.Now()
					if err == nil && !json.Valid(r.body) {
						err = fmt.Errorf("poll answered %q", r.body)
					}
					got <- err
				}()
				time.Sleep(20 * time.Millisecond) // the poll is waiting
				start := time.Now()
				if err := c.postJSON(ctx, "/api/space", map[string]any{"Slug": fmt.Sprintf("event-%d", i)}, nil); err != nil {
					return 0, err
				}
				if err := <-got; err != nil {
					return 0, err
				}
				return at.Sub(start), nil
			},
			rawRound: func(ctx context.Context, i int) (time.Duration, error) {
				return w.raw.notifyRoundTrip(ctx, w.orgID)
			},
		},
	}
	if kv != nil {
		value := deployment("u-00000", 1)
		wls[0].etcd = func(ctx context.Context, wk, i int) error { return kv.put(ctx, w.unitOf(wk, i), value) }
		wls[1].prepare = func(ctx context.Context) error {
			for i := range w.cfg.Units {
				if err := kv.put(ctx, i, value); err != nil {
					return err
				}
			}
			return nil
		}
		wls[1].etcd = func(ctx context.Context, wk, i int) error { return kv.get(ctx, w.unitOf(wk, i)) }
	}
	return wls
}
