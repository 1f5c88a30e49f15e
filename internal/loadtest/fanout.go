package loadtest

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// FanOut is the event-delivery benchmark (hubd-loadtest -fanout N): on one hubd replica started for the
// run, it first times one event (a Tag created) reaching a single waiting worker poll beside a bare
// LISTEN/NOTIFY round trip on the same PostgreSQL, then holds N idle polls (TimeoutSeconds 60), half
// BridgeWorker event-cursor polls (distinct cursor Names) and half Channel polls (one Channel each,
// subscribed to tag.created), perWorker per worker (its bot User holds the Channels' leases), and reports
// hubd's resident memory and goroutines before and with them, and how long one event took to reach all
// of them. The client is this process; hubd is another. It runs once per long-poll mode of
// cfg.LongPollModes (each on a hubd of its own and a fresh database, one after the other) and ends with
// the modes side by side.
func FanOut(ctx context.Context, cfg Config, polls, perWorker int) error {
	fmt.Fprintf(cfg.Out, "hubd event fan-out: %d waiting polls (%d per BridgeWorker; %d worker event-cursor polls, %d Channel polls), %d single-poll rounds\n",
		polls, perWorker, polls-polls/2, polls/2, cfg.Rounds)
	fmt.Fprintf(cfg.Out, "machine: %s\n\n", machine())
	modes := cfg.LongPollModes
	if len(modes) == 0 {
		modes = []string{""}
	}
	var all []fanOutFigures
	for _, mode := range modes {
		fmt.Fprintf(cfg.Out, "## long-poll mode: %s\n\n", cmp.Or(mode, "hubd's default"))
		figures, err := fanOutOnce(ctx, cfg, polls, perWorker, mode)
		if err != nil {
			return fmt.Errorf("mode %q: %w", mode, err)
		}
		all = append(all, figures)
	}
	if len(all) > 1 {
		printModes(cfg.Out, polls, all)
	}
	return nil
}

// fanOutFigures are one mode's figures, for the modes side by side.
type fanOutFigures struct {
	mode                string
	idle, with          footprint
	startCPU, answerCPU time.Duration // hubd's, per poll started and per answer
	single, all         Result        // from the Tag's transaction to the answers
	allFirst, allLast   time.Duration
	notify              Result // the bare LISTEN/NOTIFY of the single-poll rounds
}

// printModes prints the modes' figures side by side.
func printModes(out io.Writer, polls int, all []fanOutFigures) {
	fmt.Fprintf(out, "## the modes side by side\n\n| %d waiting polls |", polls)
	for _, f := range all {
		fmt.Fprintf(out, " %s |", cmp.Or(f.mode, "default"))
	}
	fmt.Fprintf(out, "\n|---|%s\n", strings.Repeat("---|", len(all)))
	row := func(what string, cell func(f fanOutFigures) string) {
		fmt.Fprintf(out, "| %s |", what)
		for _, f := range all {
			fmt.Fprintf(out, " %s |", cell(f))
		}
		fmt.Fprintln(out)
	}
	row("hubd RSS idle", func(f fanOutFigures) string { return fmt.Sprintf("%.0f MB", f.idle.rssMB) })
	row("hubd RSS with the polls, settled", func(f fanOutFigures) string { return fmt.Sprintf("%.0f MB", f.with.rssMB) })
	row("added per waiting poll", func(f fanOutFigures) string {
		return fmt.Sprintf("%.1f KB", (f.with.rssMB-f.idle.rssMB)*1024/float64(polls))
	})
	row("goroutines with the polls", func(f fanOutFigures) string { return strconv.Itoa(f.with.goroutines) })
	row("hubd CPU to start a poll", func(f fanOutFigures) string { return fmt.Sprintf("%.0f us", float64(f.startCPU.Microseconds())) })
	row("one event to all, from the Tag's transaction: first / p50 / p99 / last", func(f fanOutFigures) string {
		return fmt.Sprintf("%s / %s / %s / %s ms", msNum(f.allFirst), msNum(f.all.Quantile(0.5)), msNum(f.all.Quantile(0.99)), msNum(f.allLast))
	})
	row("hubd CPU per answer of the fan-out", func(f fanOutFigures) string { return fmt.Sprintf("%.0f us", float64(f.answerCPU.Microseconds())) })
	row("one event to one waiting poll, from the Tag's transaction: p50 / p99", func(f fanOutFigures) string {
		return fmt.Sprintf("%s / %s ms", msNum(f.single.Quantile(0.5)), msNum(f.single.Quantile(0.99)))
	})
	row("bare LISTEN/NOTIFY in the same rounds: p50 / p99", func(f fanOutFigures) string {
		return fmt.Sprintf("%s / %s ms", msNum(f.notify.Quantile(0.5)), msNum(f.notify.Quantile(0.99)))
	})
	fmt.Fprintln(out)
}

// fanOutOnce runs the benchmark on a hubd in the long-poll mode (hubd's default when empty).
func fanOutOnce(ctx context.Context, cfg Config, polls, perWorker int, mode string) (fanOutFigures, error) {
	figures := fanOutFigures{mode: mode}
	dbURL, err := freshDatabase(ctx, cfg.DatabaseURL)
	if err != nil {
		return figures, err
	}
	defer dropDatabase(cfg.DatabaseURL)
	var args []string
	if mode != "" {
		args = []string{"--long-poll-mode", mode}
	}
	srv, err := startServer(ctx, cfg.Hubd, dbURL, args...)
	if err != nil {
		return figures, err
	}
	defer srv.stop()
	token, err := srv.mintToken(ctx, cfg.Hubd, dbURL, "fanout", "fanout")
	if err != nil {
		return figures, err
	}
	admin := newClient(srv.base, token, 4)
	var sp struct{ SpaceID string }
	if err := admin.postJSON(ctx, "/api/space", map[string]any{"Slug": "fanout"}, &sp); err != nil {
		return figures, err
	}
	f := &fanOut{srv: srv, admin: admin, spaceID: sp.SpaceID, conns: newPollConns(srv.base)}
	defer f.conns.close()
	workers := (polls + perWorker - 1) / perWorker
	if err := f.addWorkers(ctx, max(workers, 1)); err != nil {
		return figures, err
	}

	baseline, err := openNotifyPair(ctx, dbURL)
	if err != nil {
		return figures, fmt.Errorf("LISTEN/NOTIFY baseline: %w", err)
	}
	defer baseline.close(ctx)
	// Each hubd round starts after a pause (its poll settling), when the processes and PostgreSQL have gone
	// idle; on a virtual machine a round trip then costs several times what it does back to back. The
	// baseline's round trips are taken in the same rounds, after the same pause.
	var fromWrite, notifies, durables []time.Duration
	single, err := rounds(ctx, cfg.Rounds, func(ctx context.Context, i int) (time.Duration, error) {
		d, err := f.deliver(ctx, 1, 1, fmt.Sprintf("single-%d", i))
		if err != nil {
			return 0, err
		}
		time.Sleep(settle(1))
		n, err := baseline.roundTrip(ctx, i, false)
		if err != nil {
			return 0, fmt.Errorf("LISTEN/NOTIFY baseline: %w", err)
		}
		time.Sleep(settle(1))
		durable, err := baseline.roundTrip(ctx, i, true)
		if err != nil {
			return 0, fmt.Errorf("LISTEN/NOTIFY baseline: %w", err)
		}
		fromWrite, notifies, durables = append(fromWrite, d[0].fromWrite), append(notifies, n), append(durables, durable)
		return d[0].fromSend, nil
	})
	if err != nil {
		return figures, fmt.Errorf("single poll: %w", err)
	}
	written, notify, durable := latencies(fromWrite), latencies(notifies), latencies(durables)
	figures.single, figures.notify = written, notify
	fmt.Fprintf(cfg.Out, "| one event to one waiting poll | p50 | p99 |\n|---|---|---|\n")
	fmt.Fprintf(cfg.Out, "| bare LISTEN/NOTIFY round trip (pgx), after the same pause | %s | %s |\n", ms(notify.Quantile(0.5)), ms(notify.Quantile(0.99)))
	fmt.Fprintf(cfg.Out, "| LISTEN/NOTIFY from a transaction that inserts a row (a commit flushed to disk, as any durable event's) | %s | %s |\n", ms(durable.Quantile(0.5)), ms(durable.Quantile(0.99)))
	fmt.Fprintf(cfg.Out, "| hubd: Tag sent (HTTP) to the poll's answer | %s | %s |\n", ms(single.Quantile(0.5)), ms(single.Quantile(0.99)))
	fmt.Fprintf(cfg.Out, "| hubd: the Tag's transaction (event CreatedAt) to the poll's answer | %s | %s |\n", ms(written.Quantile(0.5)), ms(written.Quantile(0.99)))
	fmt.Fprintf(cfg.Out, "| difference to LISTEN/NOTIFY (from the transaction) | %s | %s |\n",
		ms(written.Quantile(0.5)-notify.Quantile(0.5)), ms(written.Quantile(0.99)-notify.Quantile(0.99)))
	fmt.Fprintf(cfg.Out, "| difference to the durable LISTEN/NOTIFY (from the transaction) | %s | %s |\n\n",
		ms(written.Quantile(0.5)-durable.Quantile(0.5)), ms(written.Quantile(0.99)-durable.Quantile(0.99)))

	// The Channels come after the single-poll rounds: their subscriptions would queue those rounds' Tags.
	if err := f.addChannels(ctx, polls/2, perWorker); err != nil {
		return figures, err
	}
	if figures.idle, err = srv.settledFootprint(time.Now().Add(time.Minute)); err != nil {
		return figures, err
	}
	ds, err := f.deliverAll(ctx, polls, perWorker, cfg.Out, &figures, cfg.ProfileDir)
	if err != nil {
		return figures, fmt.Errorf("fan-out: %w", err)
	}
	fromSend, fromTx := make([]time.Duration, len(ds)), make([]time.Duration, len(ds))
	for i, d := range ds {
		fromSend[i], fromTx[i] = d.fromSend, d.fromWrite
	}
	fmt.Fprintf(cfg.Out, "| one event to %d waiting polls | first | p50 | p99 | last |\n|---|---|---|---|---|\n", polls)
	for _, row := range []struct {
		what string
		lat  []time.Duration
	}{{"Tag sent (HTTP) to each poll's answer", fromSend}, {"the Tag's transaction to each poll's answer", fromTx}} {
		r := latencies(row.lat)
		fmt.Fprintf(cfg.Out, "| %s | %s | %s | %s | %s |\n", row.what, ms(row.lat[0]), ms(r.Quantile(0.5)), ms(r.Quantile(0.99)), ms(row.lat[len(row.lat)-1]))
	}
	fmt.Fprintln(cfg.Out)
	figures.all, figures.allFirst, figures.allLast = latencies(fromTx), fromTx[0], fromTx[len(fromTx)-1]
	return figures, nil
}

type fanOut struct {
	srv     *server
	admin   *client
	spaceID string
	conns   *pollConns // the polls' connections
	// workers are the BridgeWorkers' poll paths and tokens.
	workers []workerPoller
	// channels are the fan-out's Channels, each leased by the bot of the worker whose polls include it (startPolls).
	channels []channelPoller
}

type workerPoller struct{ base, token, userID string }

type channelPoller struct{ id, base, token, claimToken string }

// addWorkers creates n BridgeWorkers and signs each in.
func (f *fanOut) addWorkers(ctx context.Context, n int) error {
	for i := range n {
		var w struct{ BridgeWorkerID, Secret, UserID string }
		if err := f.admin.postJSON(ctx, "/api/space/"+f.spaceID+"/bridge_worker", map[string]any{"Slug": fmt.Sprintf("w%d", i)}, &w); err != nil {
			return err
		}
		body, _ := json.Marshal(map[string]string{"WorkerID": w.BridgeWorkerID, "Secret": w.Secret})
		resp, err := http.Post(f.srv.base+"/auth/worker", "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		err = json.NewDecoder(resp.Body).Decode(&tok)
		resp.Body.Close()
		if err != nil || tok.AccessToken == "" {
			return fmt.Errorf("signing worker %d in: status %d, %v", i, resp.StatusCode, err)
		}
		f.workers = append(f.workers, workerPoller{base: "/api/space/" + f.spaceID + "/bridge_worker/" + w.BridgeWorkerID, token: tok.AccessToken, userID: w.UserID})
	}
	return nil
}

// addChannels creates n Channels subscribed to tag.created, the i-th granting Claim to the worker whose
// bot User polls it (the fan-out's poll 2i+1), and takes each one's lease as that bot.
func (f *fanOut) addChannels(ctx context.Context, n, perWorker int) error {
	f.channels = make([]channelPoller, n)
	return concurrently(16, n, func(i int) error {
		_, w := f.nth(2*i+1, perWorker) // the Channel's poll
		return f.addChannel(ctx, i, w)
	})
}

// concurrently runs do(0) to do(n-1) on at most workers goroutines and returns the first error.
func concurrently(workers, n int, do func(i int) error) error {
	work, errs := make(chan int), make(chan error, n)
	for range min(workers, n) {
		go func() {
			for i := range work {
				errs <- do(i)
			}
		}()
	}
	go func() {
		for i := range n {
			work <- i
		}
		close(work)
	}()
	for range n {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

func (f *fanOut) addChannel(ctx context.Context, i int, w workerPoller) error {
	var ch struct{ ChannelID string }
	if err := f.admin.postJSON(ctx, "/api/space/"+f.spaceID+"/channel", map[string]any{"Slug": fmt.Sprintf("fan-%d", i),
		"Subscriptions": []map[string]any{{"EventTypes": []string{"tag.created"}}},
		"Permissions":   map[string]any{"Claim": map[string]any{"UserIDs": map[string]bool{w.userID: true}}}}, &ch); err != nil {
		return err
	}
	bot := &client{base: f.admin.base, token: w.token, http: f.admin.http}
	base := "/api/space/" + f.spaceID + "/channel/" + ch.ChannelID
	var lease struct{ ClaimToken string }
	if err := bot.postJSON(ctx, base+"/lease", map[string]any{}, &lease); err != nil {
		return err
	}
	f.channels[i] = channelPoller{id: ch.ChannelID, base: base, token: w.token, claimToken: lease.ClaimToken}
	return nil
}

// nth is what the fan-out's i-th poll polls: every other poll is a Channel's while there are Channels
// (ch), the others are event-cursor polls of worker w, perWorker polls to a worker.
func (f *fanOut) nth(i, perWorker int) (ch *channelPoller, w workerPoller) {
	if i%2 == 1 && i/2 < len(f.channels) {
		ch = &f.channels[i/2]
	}
	return ch, f.workers[(i/perWorker)%len(f.workers)]
}

// pollWorker holds one event-cursor poll until it answers.
func (f *fanOut) pollWorker(w workerPoller, name string, timeout int) (polled, error) {
	return f.poll(w.token, w.base+"/event_cursor/"+name+"/poll", map[string]any{"TimeoutSeconds": timeout, "EventTypes": []string{"tag.created"}}, timeout)
}

// pollChannel holds one Channel poll until it answers.
func (f *fanOut) pollChannel(ch *channelPoller, timeout int) (polled, error) {
	return f.poll(ch.token, ch.base+"/poll", map[string]any{"TimeoutSeconds": timeout, "ClaimToken": ch.claimToken}, timeout)
}

func (f *fanOut) poll(token, path string, body any, timeout int) (polled, error) {
	data, _ := json.Marshal(body)
	r, err := f.conns.post(token, path, data, time.Duration(timeout)*time.Second+time.Minute)
	if err == nil && r.status != http.StatusOK && r.status != http.StatusNoContent { // 204: a Channel poll that ended with nothing
		err = fmt.Errorf("poll %s: status %d: %s", path, r.status, r.body)
	}
	return r, err
}

// events are the events of a poll's answer: a worker poll's are its body, a Channel poll's are in its
// messages; when their transactions wrote them (the database's clock, the host's) is what the benchmark reads.
func (r polled) events(channel bool) ([]polledEvent, error) {
	if r.status == http.StatusNoContent {
		return nil, nil
	}
	if !channel {
		var events []polledEvent
		err := json.Unmarshal(r.body, &events)
		return events, err
	}
	var msgs []struct{ Event polledEvent }
	err := json.Unmarshal(r.body, &msgs)
	events := make([]polledEvent, len(msgs))
	for i, m := range msgs {
		events[i] = m.Event
	}
	return events, err
}

type polledEvent struct{ CreatedAt time.Time }

// answer is one of startPolls' polls answered: read as it arrives, decoded once all have (tagAndCollect),
// so that decoding one does not hold up reading the next.
type answer struct {
	i       int
	channel bool
	polled
	err error
}

// startPolls starts n polls over the workers (perWorker each): event-cursor polls named prefix-<i>, every
// other one a poll of the next Channel instead when the fan-out has Channels; each sends its answer on
// the channel returned.
func (f *fanOut) startPolls(n, perWorker int, prefix string) <-chan answer {
	out := make(chan answer, n)
	for i := range n {
		ch, w := f.nth(i, perWorker)
		go func() {
			a := answer{i: i, channel: ch != nil}
			if ch != nil {
				a.polled, a.err = f.pollChannel(ch, 60)
			} else {
				a.polled, a.err = f.pollWorker(w, fmt.Sprintf("%s-%d", prefix, i), 60)
			}
			out <- a
		}()
	}
	return out
}

// catchUp places the worker cursors startPolls will poll (a poll that does not wait) and brings the
// Channels' bookmarks to the end of the log (polls of a second, which read past everything before they
// wait, again for the Channels a busy second left behind). The timed polls must all be waiting, and the
// event delivered, within their 60-second timeout: creating 5,000 cursors, and 5,000 Channels each
// reading past the creation events of the Channels made after it (a hundred a transaction), takes most
// of that on a small machine, and is not what the benchmark measures.
func (f *fanOut) catchUp(ctx context.Context, n, perWorker int, prefix string) error {
	polls := make([]int, n)
	for i := range polls {
		polls[i] = i
	}
	for len(polls) > 0 {
		if err := f.pollOnce(polls, perWorker, prefix); err != nil {
			return fmt.Errorf("catching up: %w", err)
		}
		var err error
		if polls, err = f.channelsBehind(ctx); err != nil {
			return err
		}
	}
	return nil
}

// pollOnce runs the polls numbered in polls (startPolls' numbering) without waiting, 256 at a time,
// and checks they got nothing: no Tag is written before the timed ones.
func (f *fanOut) pollOnce(polls []int, perWorker int, prefix string) error {
	return concurrently(256, len(polls), func(k int) error {
		i := polls[k]
		var r polled
		var err error
		ch, w := f.nth(i, perWorker)
		if ch != nil {
			r, err = f.pollChannel(ch, 1)
		} else {
			r, err = f.pollWorker(w, fmt.Sprintf("%s-%d", prefix, i), 0)
		}
		var got []polledEvent
		if err == nil {
			got, err = r.events(ch != nil)
		}
		if err == nil && len(got) > 0 {
			err = fmt.Errorf("poll %d: %d events before any was written", i, len(got))
		}
		return err
	})
}

// channelsBehind are the polls (startPolls' numbering) of the Channels whose bookmark is short of the
// end of the log.
func (f *fanOut) channelsBehind(ctx context.Context) ([]int, error) {
	conn, err := pgx.Connect(ctx, f.srv.databaseURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT channel_id::text FROM channel c
		WHERE event_bookmark < (SELECT max(cursor_id) FROM event_log e WHERE e.organization_id = c.organization_id)`)
	if err != nil {
		return nil, err
	}
	behind, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	index := make(map[string]int, len(f.channels))
	for k, ch := range f.channels {
		index[ch.id] = k
	}
	var polls []int
	for _, id := range behind {
		if k, ok := index[id]; ok {
			polls = append(polls, 2*k+1) // nth: the k-th Channel is poll 2k+1
		}
	}
	return polls, nil
}

// waitStarted waits until the n polls startPolls started are reading or waiting: the worker polls'
// cursors (named prefix-*) exist and, where hubd reports its waiting polls (hubd_waiting_long_polls, or
// hubd_parked_long_polls in builds before it), all n are waiting. A hubd without either gauge gets
// settle's grace. A poll answered before then (failed, or its wait over: a machine too slow to start them
// all within the polls' timeout) ends the run.
func (f *fanOut) waitStarted(ctx context.Context, n int, prefix string, answers <-chan answer) error {
	conn, err := pgx.Connect(ctx, f.srv.databaseURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	workerPolls := n - min(n/2, len(f.channels))
	// Thousands of polls take seconds to start; reading hubd's metrics every 20 ms then would add to the CPU
	// hubd is timed using to start them.
	interval := 20 * time.Millisecond
	if n > 1000 {
		interval = 250 * time.Millisecond
	}
	for {
		var have int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM bridge_worker_cursor WHERE name LIKE $1", prefix+"-%").Scan(&have); err != nil {
			return err
		}
		if have >= workerPolls {
			waiting, reported, err := f.srv.waitingPolls()
			if err != nil {
				return err
			}
			if !reported || waiting >= n {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case a := <-answers:
			if a.err == nil {
				a.err = fmt.Errorf("status %d", a.status)
			}
			return fmt.Errorf("poll %d answered before all %d were waiting: %w", a.i, n, a.err)
		case <-time.After(interval):
		}
	}
}

// delivery is how long an event took to reach a poll: from the moment its Tag was sent, and from its
// transaction's time (CreatedAt), which leaves out the HTTP request that wrote it.
type delivery struct{ fromSend, fromWrite time.Duration }

// deliver starts n polls, lets them settle, creates a Tag and returns each poll's delivery.
func (f *fanOut) deliver(ctx context.Context, n, perWorker int, prefix string) ([]delivery, error) {
	answers := f.startPolls(n, perWorker, prefix)
	if err := f.waitStarted(ctx, n, prefix, answers); err != nil {
		return nil, err
	}
	time.Sleep(settle(n))
	sent, all, err := f.tagAndWait(ctx, n, prefix, answers)
	if err != nil {
		return nil, err
	}
	return deliveries(sent, all)
}

// tagAndWait creates a Tag and waits for the n answers; sent is when the Tag was sent.
func (f *fanOut) tagAndWait(ctx context.Context, n int, slug string, answers <-chan answer) (sent time.Time, all []answer, err error) {
	sent = time.Now()
	if err := f.admin.postJSON(ctx, "/api/space/"+f.spaceID+"/tag", map[string]any{"Slug": slug}, nil); err != nil {
		return sent, nil, err
	}
	all = make([]answer, n)
	for i := range n {
		all[i] = <-answers
	}
	return sent, all, nil
}

// deliveries checks that each answer holds the one event and times its delivery.
func deliveries(sent time.Time, all []answer) ([]delivery, error) {
	out := make([]delivery, len(all))
	for i, a := range all {
		if a.err != nil {
			return nil, a.err
		}
		got, err := a.events(a.channel)
		if err == nil && len(got) != 1 {
			err = fmt.Errorf("got %d events, want 1", len(got))
		}
		if err != nil {
			return nil, fmt.Errorf("poll %d: %w", a.i, err)
		}
		out[i] = delivery{fromSend: a.at.Sub(sent), fromWrite: a.at.Sub(got[0].CreatedAt)}
	}
	return out, nil
}

// settle is how long polls are given, after their cursors exist, to be waiting rather than reading.
func settle(n int) time.Duration { return 20*time.Millisecond + time.Duration(n)*200*time.Microsecond }

// deliverAll holds n polls, reports the footprint with them beside idle, and delivers one event to all.
func (f *fanOut) deliverAll(ctx context.Context, n, perWorker int, out io.Writer, figures *fanOutFigures, profileDir string) ([]delivery, error) {
	idle := figures.idle
	caughtUp := time.Now()
	if err := f.catchUp(ctx, n, perWorker, "fan"); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "(cursors placed and Channels caught up with the log in %.0f s)\n\n", time.Since(caughtUp).Seconds())
	// Starting the polls: a fleet polls again after every event, so what a poll costs to start bounds the
	// event rate a replica keeps up with.
	startCPU, err := f.srv.cpuTime()
	if err != nil {
		return nil, err
	}
	var startProfile <-chan error
	if profileDir != "" {
		startProfile = f.srv.profile(10*time.Second, filepath.Join(profileDir, "poll-start.pprof"))
	}
	started := time.Now()
	answers := f.startPolls(n, perWorker, "fan")
	if err := f.waitStarted(ctx, n, "fan", answers); err != nil {
		return nil, err
	}
	startedCPU, err := f.srv.cpuTime()
	if err != nil {
		return nil, err
	}
	if startProfile != nil {
		if err := <-startProfile; err != nil {
			return nil, err
		}
	}
	time.Sleep(settle(n))
	settling := time.Now()
	// Read while every poll still waits: the first sent times out 60 s after it was sent, and the event
	// must reach them all before.
	with, err := f.srv.settledFootprint(started.Add(45 * time.Second))
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "| hubd process | RSS | goroutines |\n|---|---|---|\n")
	fmt.Fprintf(out, "| idle | %.0f MB | %d |\n", idle.rssMB, idle.goroutines)
	fmt.Fprintf(out, "| with %d waiting polls (all waiting %.0f s after the first was sent; settled after %.0f s more) | %.0f MB | %d |\n",
		n, settling.Sub(started).Seconds(), time.Since(settling).Seconds(), with.rssMB, with.goroutines)
	fmt.Fprintf(out, "| per poll | %.1f KB | %.2f |\n\n", (with.rssMB-idle.rssMB)*1024/float64(n), float64(with.goroutines-idle.goroutines)/float64(n))
	fmt.Fprintf(out, "(CPU time hubd used to start the %d polls: %s, %.0f us a poll)\n\n", n, ms(startedCPU-startCPU), float64((startedCPU-startCPU).Microseconds())/float64(n))
	figures.with, figures.startCPU = with, (startedCPU-startCPU)/time.Duration(n)
	if profileDir != "" {
		// hubd's heap with the polls waiting, and a CPU profile while the event reaches them (go tool pprof).
		if err := f.srv.saveProfile("heap?gc=1", filepath.Join(profileDir, "fanout-heap.pprof")); err != nil {
			return nil, err
		}
		if err := f.srv.saveProfile("heap?debug=1", filepath.Join(profileDir, "fanout-memstats.txt")); err != nil {
			return nil, err
		}
		if err := f.srv.saveProfile("goroutine?debug=1", filepath.Join(profileDir, "fanout-goroutines.txt")); err != nil {
			return nil, err
		}
		done := f.srv.profile(10*time.Second, filepath.Join(profileDir, "fanout.pprof"))
		defer func() { <-done }()
		// This process's side of the delivery: reading the answers.
		client, err := os.Create(filepath.Join(profileDir, "fanout-client.pprof"))
		if err != nil {
			return nil, err
		}
		defer client.Close()
		if err := pprof.StartCPUProfile(client); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
		time.Sleep(200 * time.Millisecond)
	}
	hubdBefore, err := f.srv.cpuTime()
	if err != nil {
		return nil, err
	}
	ownBefore := ownCPUTime()
	sent, all, err := f.tagAndWait(ctx, n, "fan", answers)
	if err != nil {
		return nil, err
	}
	ownUsed := ownCPUTime() - ownBefore
	hubdAfter, err := f.srv.cpuTime()
	if err != nil {
		return nil, err
	}
	hubdUsed := hubdAfter - hubdBefore
	figures.answerCPU = hubdUsed / time.Duration(n)
	fmt.Fprintf(out, "(CPU time used while the event reached them: hubd %s, %.0f us an answer; this client %s, %.0f us an answer)\n\n",
		ms(hubdUsed), float64(hubdUsed.Microseconds())/float64(n), ms(ownUsed), float64(ownUsed.Microseconds())/float64(n))
	return deliveries(sent, all)
}

// settledFootprint is the footprint once hubd's RSS has held still (within 1 MB) for ten seconds, at
// most 25 seconds in all and not past until (the waiting polls' timeout is 60 seconds): after a burst (the
// polls arriving, setting up), the runtime gives memory back over a few seconds.
func (s *server) settledFootprint(until time.Time) (footprint, error) {
	start := time.Now()
	fp, err := s.footprint()
	for still := time.Now(); err == nil && time.Since(still) < 10*time.Second && time.Since(start) < 25*time.Second && time.Now().Before(until); {
		time.Sleep(time.Second)
		var now footprint
		if now, err = s.footprint(); err == nil && math.Abs(now.rssMB-fp.rssMB) >= 1 {
			fp, still = now, time.Now()
		}
	}
	return fp, err
}

// footprint is what the hubd process holds: resident memory and goroutines.
type footprint struct {
	rssMB      float64
	goroutines int
}

func (s *server) footprint() (footprint, error) {
	var fp footprint
	var err error
	if fp.rssMB, err = s.rssMB(); err != nil {
		return fp, err
	}
	resp, err := http.Get("http://" + s.debug + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return fp, err
	}
	defer resp.Body.Close()
	first, _ := bufio.NewReader(resp.Body).ReadString('\n')
	if _, err := fmt.Sscanf(first, "goroutine profile: total %d", &fp.goroutines); err != nil {
		return fp, fmt.Errorf("reading goroutines from %q: %w", first, err)
	}
	return fp, nil
}

// rssMB is hubd's resident memory (VmRSS), in MB.
func (s *server) rssMB() (float64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return float64(kb) / 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", s.cmd.Process.Pid)
}

// waitingPolls reads how many long polls hubd reports waiting (hubd_waiting_long_polls, else
// hubd_parked_long_polls), and whether it reports them at all.
func (s *server) waitingPolls() (int, bool, error) {
	resp, err := http.Get(s.base + "/metrics")
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	gauges := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		for _, name := range []string{"hubd_waiting_long_polls", "hubd_parked_long_polls"} {
			if rest, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
				v, err := strconv.ParseFloat(rest, 64)
				if err != nil {
					return 0, false, err
				}
				gauges[name] = v
			}
		}
	}
	for _, name := range []string{"hubd_waiting_long_polls", "hubd_parked_long_polls"} {
		if v, ok := gauges[name]; ok {
			return int(v), true, nil
		}
	}
	return 0, false, sc.Err()
}

// notifyPair is the floor of any delivery through PostgreSQL: a NOTIFY (its own transaction) from one
// connection reaching a LISTEN on another.
type notifyPair struct{ listener, sender *pgx.Conn }

func openNotifyPair(ctx context.Context, dbURL string) (*notifyPair, error) {
	listener, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	sender, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		listener.Close(ctx)
		return nil, err
	}
	p := &notifyPair{listener: listener, sender: sender}
	if _, err := listener.Exec(ctx, "LISTEN hubd_fanout_baseline"); err != nil {
		p.close(ctx)
		return nil, err
	}
	if _, err := sender.Exec(ctx, "CREATE TABLE IF NOT EXISTS hubd_fanout_baseline (n text)"); err != nil {
		p.close(ctx)
		return nil, err
	}
	return p, nil
}

// roundTrip times one NOTIFY reaching the listener; a durable one is sent by a transaction that also
// inserts a row, so its commit waits for the disk.
func (p *notifyPair) roundTrip(ctx context.Context, i int, durable bool) (time.Duration, error) {
	sql := "SELECT pg_notify('hubd_fanout_baseline', $1)"
	if durable {
		sql = "WITH written AS (INSERT INTO hubd_fanout_baseline VALUES ($1::text)) SELECT pg_notify('hubd_fanout_baseline', $1::text)"
	}
	start := time.Now()
	if _, err := p.sender.Exec(ctx, sql, strconv.Itoa(i)); err != nil {
		return 0, err
	}
	if _, err := p.listener.WaitForNotification(ctx); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

func (p *notifyPair) close(ctx context.Context) {
	p.listener.Close(ctx)
	p.sender.Close(ctx)
}

// saveProfile writes one of hubd's runtime profiles (heap, goroutine) to file.
func (s *server) saveProfile(name, file string) error {
	resp, err := http.Get("http://" + s.debug + "/debug/pprof/" + name)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(file, data, 0o644)
}
