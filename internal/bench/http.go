package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/matching/synth"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/users"
	"github.com/matchpoint-api/matchpoint/internal/webhooks"
)

// HTTPOptions choose what `bench http` drives and where.
type HTTPOptions struct {
	Options
	Nodes  []int // cluster sizes to measure in turn, over the same data (own service only)
	Users  int   // people seeded
	Events int   // sports events seeded
	Hooks  int   // webhook endpoints of each client account: every write fans out to as many deliveries
	// Target, if set, is a running service or cluster (its nodes' or its
	// load balancer's URLs); APIKey is the key the load uses there.
	Target []string
	APIKey string
	Stderr io.Writer
}

// OpFigures are one operation's figures in one run.
type OpFigures struct {
	Op       string  `json:"op"`
	Requests int     `json:"requests"`
	Errors   int     `json:"errors"`
	PerSec   float64 `json:"per_second"`
	P50ms    float64 `json:"p50_ms"`
	P95ms    float64 `json:"p95_ms"`
	P99ms    float64 `json:"p99_ms"`
}

// HTTPRun is one configuration's run: the mix, and /healthz alone on the
// same nodes right before it, as the baseline.
type HTTPRun struct {
	Nodes         int         `json:"nodes"`
	Engine        string      `json:"engine"`
	Seconds       float64     `json:"seconds"`
	PerSec        float64     `json:"requests_per_second"`
	HealthzPerSec float64     `json:"healthz_per_second"`
	Ratio         float64     `json:"ratio_to_healthz"`
	Ops           []OpFigures `json:"ops"`
	Writes        int         `json:"writes"`
	Deliveries    int64       `json:"webhook_deliveries"`
	DrainSeconds  float64     `json:"webhook_drain_seconds" doc:"after the load stopped, until every write's webhooks had arrived"`
	ServiceCPUus  float64     `json:"service_cpu_us_per_request" doc:"CPU time of the service processes per request (own nodes only)"`
	DatabaseCPUus float64     `json:"database_cpu_us_per_request" doc:"CPU time of the PostgreSQL server processes serving the nodes, per request"`
}

// HTTPResult is every run, and the throughput of each relative to the first.
type HTTPResult struct {
	Runs   []HTTPRun `json:"runs"`
	Ratios []float64 `json:"throughput_ratio_to_first_run"`
}

// op is one kind of request of the mix, with its share.
type op struct {
	name   string
	weight int
	want   int
	req    func(w *httpWorker) (method, path, body string)
	hooks  bool // a write whose event fans out to the account's webhook endpoints
}

// httpWorker is one closed-loop client: an account of its own, so that rate
// limits, matches and webhooks are per account as with real clients.
type httpWorker struct {
	key    string
	sport  string
	rnd    *rand.Rand
	others []string // profiles to read
	conv   string   // a direct conversation with another client ("" against a running service)
}

// mix is the realistic blend: mostly reads (own profile, other people's,
// match finds, event searches), messages between clients, and writes that
// fan out to webhooks.
func mix(words []string) []op {
	return []op{
		{name: "GET /v1/users/me", weight: 20, want: 200, req: func(w *httpWorker) (string, string, string) { return "GET", "/v1/users/me", "" }},
		{name: "GET /v1/users/{id}", weight: 15, want: 200, req: func(w *httpWorker) (string, string, string) {
			return "GET", "/v1/users/" + w.others[w.rnd.IntN(len(w.others))], ""
		}},
		{name: "POST /v1/matches/find", weight: 15, want: 200, req: func(w *httpWorker) (string, string, string) {
			return "POST", "/v1/matches/find", `{"sports":["` + w.sport + `"],"limit":20}`
		}},
		{name: "GET /v1/events (search)", weight: 25, want: 200, req: func(w *httpWorker) (string, string, string) {
			p := benchPlaces[w.rnd.IntN(len(benchPlaces))]
			return "GET", "/v1/events?near=" + url.QueryEscape(p.label) + "&q=" + url.QueryEscape(words[w.rnd.IntN(len(words))]), ""
		}},
		{name: "POST /v1/conversations/{id}/messages", weight: 15, want: 201, req: func(w *httpWorker) (string, string, string) {
			return "POST", "/v1/conversations/" + w.conv + "/messages", fmt.Sprintf(`{"body":"Court 3 at %d:00?"}`, 7+w.rnd.IntN(14))
		}},
		{name: "POST /v1/events (webhooks)", weight: 10, want: 201, hooks: true, req: func(w *httpWorker) (string, string, string) {
			p := benchPlaces[w.rnd.IntN(len(benchPlaces))]
			date := time.Now().Add(time.Duration(24+w.rnd.IntN(24*30)) * time.Hour).UTC().Format(time.RFC3339)
			return "POST", "/v1/events", fmt.Sprintf(`{"title":"Evening game","sport":%q,"location":%q,"date":%q,"max_participants":8}`,
				w.sport, p.label, date)
		}},
	}
}

// HTTP drives the mix against the service: its own nodes over a throwaway
// database (one configuration per entry of o.Nodes, same data), or a running
// service (o.Target). It prints a progress line and a table on stderr, and
// returns the figures.
func HTTP(ctx context.Context, o HTTPOptions) (*HTTPResult, error) {
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if len(o.Target) > 0 {
		return httpTarget(ctx, o)
	}
	if slices.ContainsFunc(o.Nodes, func(n int) bool { return n > 1 }) && o.DatabaseURL == "" {
		return nil, errors.New("bench: several nodes need PostgreSQL (--postgres)")
	}
	dir, err := os.MkdirTemp("", "matchpoint-bench-http-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	rcv, err := newReceiver(dir)
	if err != nil {
		return nil, err
	}
	defer rcv.srv.Close()
	o.Tune = func(c *config.Config) { c.WebhookAllowPrivate, c.WebhookCAFile = true, rcv.caFile }
	e, err := start(ctx, o.Options)
	if err != nil {
		return nil, err
	}
	defer e.close()
	workers, err := seedHTTP(ctx, e, o, rcv)
	if err != nil {
		return nil, err
	}
	ops := mix(store.SeedWords())
	res := &HTTPResult{}
	var db *dbCPU
	if e.Engine == "postgres" {
		admin, err := sql.Open("pgx", o.DatabaseURL)
		if err != nil {
			return nil, err
		}
		defer admin.Close()
		db = &dbCPU{admin: admin, app: e.appName}
	}
	for _, n := range o.Nodes {
		var nodes []*node
		stopAll := func() {
			for _, nd := range nodes {
				nd.stop()
			}
		}
		for range n {
			nd, err := startServe(ctx, e, o.Options, "MATCHPOINT_WEBHOOK_ALLOW_PRIVATE=true", "MATCHPOINT_WEBHOOK_CA_FILE="+rcv.caFile)
			if err != nil {
				stopAll()
				return res, err
			}
			nodes = append(nodes, nd)
		}
		var urls []string
		pids := []int{}
		for _, nd := range nodes {
			urls = append(urls, nd.url)
			pids = append(pids, nd.cmd.Process.Pid)
		}
		if err := waitVerified(ctx, e, o, workers); err != nil {
			stopAll()
			return res, err
		}
		r, err := loadRun(ctx, o, urls, pids, db, workers, ops, rcv, e.Engine)
		stopAll()
		if err != nil {
			return res, err
		}
		res.Runs = append(res.Runs, *r)
	}
	for _, r := range res.Runs {
		res.Ratios = append(res.Ratios, r.PerSec/res.Runs[0].PerSec)
	}
	if len(res.Runs) > 1 {
		fmt.Fprintf(o.Stderr, "throughput relative to %d node(s): %s\n", res.Runs[0].Nodes, fmtRatios(res.Ratios))
	}
	return res, nil
}

// dbCPU reads the CPU time of the PostgreSQL server processes that serve
// the bench's schema (their application_name). Connections closed during
// the run take their time with them: the figure is a lower bound.
type dbCPU struct {
	admin  *sql.DB
	app    string
	before map[int]time.Duration
}

func (d *dbCPU) start(ctx context.Context) {
	if d == nil {
		return
	}
	d.before = map[int]time.Duration{}
	for _, pid := range backends(ctx, d.admin, d.app) {
		d.before[pid] = cpuOf(pid)
	}
}

func (d *dbCPU) since(ctx context.Context) time.Duration {
	if d == nil {
		return 0
	}
	var t time.Duration
	for _, pid := range backends(ctx, d.admin, d.app) {
		t += cpuOf(pid) - d.before[pid]
	}
	return t
}

func cpuOfAll(pids []int) time.Duration {
	var d time.Duration
	for _, p := range pids {
		d += cpuOf(p)
	}
	return d
}

// seedHTTP writes the data the mix reads: people (a sample of whom become
// the clients, Enterprise accounts with a limit the run cannot reach), events
// around the bench's cities, and the clients' webhook endpoints.
func seedHTTP(ctx context.Context, e *env, o HTTPOptions, rcv *hookReceiver) ([]*httpWorker, error) {
	var sample []*users.User
	g := synth.New(synth.Options{Seed: 3, Tag: "h"})
	if _, err := synth.Seed(ctx, e.app.DB, g, o.Users, 5000, "", synth.ProgressBar(o.Stderr, "seed people", o.Users), func(p synth.Person) {
		if store.Recommendable(p.User) && len(sample) < max(o.Concurrency, 200) {
			sample = append(sample, p.User)
		}
	}); err != nil {
		return nil, err
	}
	if len(sample) < o.Concurrency {
		return nil, fmt.Errorf("bench: %d people seeded, too few to make %d clients of", o.Users, o.Concurrency)
	}
	if err := e.app.DB.OptimizeMatchIndex(ctx); err != nil {
		return nil, err
	}
	creators := make([]string, 0, 20)
	for _, u := range sample[:min(20, len(sample))] {
		creators = append(creators, u.ID)
	}
	places := make([]store.SeedPlace, len(benchPlaces))
	for i, p := range benchPlaces {
		places[i] = store.SeedPlace{Label: p.label, Lat: p.lat, Lon: p.lon, Timezone: p.tz}
	}
	fmt.Fprintf(o.Stderr, "seed %d events\n", o.Events)
	if _, err := store.SeedEvents(ctx, e.app.DB, o.Events, rand.New(rand.NewPCG(3, 4)), creators, places, e.app.Clock.Now()); err != nil {
		return nil, err
	}
	if err := e.app.DB.Analyze(ctx); err != nil {
		return nil, err
	}
	others := make([]string, len(sample))
	for i, u := range sample {
		others[i] = u.ID
	}
	huge := int64(1_000_000_000)
	workers := make([]*httpWorker, o.Concurrency)
	for i := range workers {
		u := sample[i]
		if _, err := e.app.Users.SetTier(ctx, u.ID, auth.TierEnterprise, &huge); err != nil {
			return nil, err
		}
		_, key, err := e.app.Keys.Create(ctx, apikeys.Spec{UserID: u.ID, Name: "bench", Scopes: []string{auth.ScopeRead, auth.ScopeWrite,
			auth.ScopeMatching, auth.ScopeEvents}})
		if err != nil {
			return nil, err
		}
		p, err := e.app.Keys.Authenticate(ctx, key)
		if err != nil {
			return nil, err
		}
		for range o.Hooks {
			if _, _, err := e.app.Webhooks.Create(ctx, p, webhooks.Spec{URL: rcv.url, Events: []string{"event.created"}}); err != nil {
				return nil, err
			}
		}
		workers[i] = &httpWorker{key: key, sport: u.Sports[0], rnd: rand.New(rand.NewPCG(uint64(i), 11)), others: others}
	}
	// Each client writes to the next one in a direct conversation.
	for i, w := range workers {
		c, _, err := e.app.Messaging.Create(ctx, sample[i].ID, []string{sample[(i+1)%len(workers)].ID}, nil)
		if err != nil {
			return nil, err
		}
		w.conv = c.ID
	}
	return workers, nil
}

// waitVerified waits until the nodes have verified every endpoint, so that
// the run's writes fan out to all of them.
func waitVerified(ctx context.Context, e *env, o HTTPOptions, workers []*httpWorker) error {
	if o.Hooks == 0 {
		return nil
	}
	for deadline := time.Now().Add(60 * time.Second); ; {
		var pending int
		if err := e.app.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM webhook_subscriptions WHERE status <> 'active'`).Scan(&pending); err != nil {
			return err
		}
		if pending == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: %d webhook endpoints not verified", pending)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// loadRun measures /healthz alone for a third of the duration, then the mix
// for the duration, closed loop, the clients spread round robin over urls.
func loadRun(ctx context.Context, o HTTPOptions, urls []string, pids []int, db *dbCPU, workers []*httpWorker, ops []op, rcv *hookReceiver, engine string) (*HTTPRun, error) {
	c := newHTTPClient(o.Concurrency * len(urls))
	label := fmt.Sprintf("%d node(s), %s", len(urls), engine)
	if len(o.Target) > 0 {
		label = fmt.Sprintf("%d URL(s)", len(urls))
	}
	// Warm-up: one request of each kind on each node, so that what a new
	// process loads on first use (the gazetteer behind near=, prepared
	// statements) is not measured.
	for _, u := range urls {
		for _, p := range ops {
			method, path, body := p.req(workers[0])
			if status, b := send2(c, method, u+path, workers[0].key, body); status != p.want {
				return nil, fmt.Errorf("bench: warm-up %s %s on %s: %d %s", method, path, u, status, truncate(string(b), 300))
			}
		}
	}
	var next atomic.Int64
	hz := run("GET /healthz", o.Concurrency, max(o.Duration/3, time.Second), func(int) (bool, bool) {
		return get(c, urls[int(next.Add(1))%len(urls)]+"/healthz", ""), true
	})
	if hz.Errors > 0 {
		return nil, fmt.Errorf("bench: %d of %d /healthz requests failed", hz.Errors, hz.Requests)
	}
	total := 0
	for _, p := range ops {
		total += p.weight
	}
	type sample struct {
		op  int
		lat time.Duration
		ok  bool
	}
	var (
		mu       sync.Mutex
		samples  []sample
		done     atomic.Int64
		failed   atomic.Int64
		writes   atomic.Int64
		firstErr atomic.Value
	)
	delivered0 := rcv.got.Load()
	cpu0 := cpuOfAll(pids)
	db.start(ctx)
	stopProgress := make(chan struct{})
	progressDone := make(chan struct{})
	begin := time.Now()
	go func() {
		defer close(progressDone)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stopProgress:
				fmt.Fprintln(o.Stderr)
				return
			case <-t.C:
				el := time.Since(begin)
				fmt.Fprintf(o.Stderr, "\r[%s] %3.0fs/%.0fs  %7d requests  %6.0f /s  %d errors  %d webhooks delivered   ",
					label, el.Seconds(), o.Duration.Seconds(), done.Load(), float64(done.Load())/el.Seconds(), failed.Load(), rcv.got.Load()-delivered0)
			}
		}
	}()
	deadline := begin.Add(o.Duration)
	var wg sync.WaitGroup
	for i, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := urls[i%len(urls)]
			var mine []sample
			for n := 0; time.Now().Before(deadline) && ctx.Err() == nil; n++ {
				k, pick := 0, w.rnd.IntN(total)
				for pick >= ops[k].weight {
					pick -= ops[k].weight
					k++
				}
				method, path, body := ops[k].req(w)
				t0 := time.Now()
				status, b := send2(c, method, base+path, w.key, body)
				ok := status == ops[k].want
				if !ok {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprintf("%s %s: %d %s", method, path, status, truncate(string(b), 300)))
				} else if ops[k].hooks {
					writes.Add(1)
				}
				mine = append(mine, sample{k, time.Since(t0), ok})
				done.Add(1)
				base = urls[(i+n+1)%len(urls)] // next request to the next node
			}
			mu.Lock()
			samples = append(samples, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(begin)
	cpu, dbc := cpuOfAll(pids)-cpu0, db.since(ctx)
	close(stopProgress)
	<-progressDone

	r := &HTTPRun{Nodes: len(urls), Engine: engine, Seconds: elapsed.Seconds(), HealthzPerSec: hz.Rate(), Writes: int(writes.Load())}
	for k, p := range ops {
		var lat []time.Duration
		f := OpFigures{Op: p.name}
		for _, s := range samples {
			if s.op == k {
				lat = append(lat, s.lat)
				if !s.ok {
					f.Errors++
				}
			}
		}
		f.Requests = len(lat)
		if len(lat) > 0 {
			slices.Sort(lat)
			f.P50ms, f.P95ms, f.P99ms = ms(lat[len(lat)/2]), ms(lat[len(lat)*95/100]), ms(lat[len(lat)*99/100])
		}
		f.PerSec = float64(f.Requests) / elapsed.Seconds()
		r.PerSec += f.PerSec
		r.Ops = append(r.Ops, f)
	}
	r.Ratio = r.PerSec / r.HealthzPerSec
	if n := len(samples); n > 0 && len(pids) > 0 {
		r.ServiceCPUus = us(cpu / time.Duration(n))
		r.DatabaseCPUus = us(dbc / time.Duration(n))
	}
	// Every write fans out to each of its account's endpoints.
	want := delivered0 + int64(r.Writes*o.Hooks)
	t1 := time.Now()
	for rcv.got.Load() < want && time.Since(t1) < 2*time.Minute && len(o.Target) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	r.Deliveries = rcv.got.Load() - delivered0
	r.DrainSeconds = time.Since(t1).Seconds()
	printRun(o.Stderr, label, r)
	if e, _ := firstErr.Load().(string); e != "" {
		return r, fmt.Errorf("bench: %d requests failed; the first: %s", failed.Load(), e)
	}
	if len(o.Target) == 0 && r.Deliveries < int64(r.Writes*o.Hooks) {
		return r, fmt.Errorf("bench: %d webhooks delivered for %d writes to %d endpoints each", r.Deliveries, r.Writes, o.Hooks)
	}
	return r, nil
}

func printRun(w io.Writer, label string, r *HTTPRun) {
	fmt.Fprintf(w, "%s: %.0f requests/s in all (GET /healthz alone: %.0f /s, ratio %.2f)\n", label, r.PerSec, r.HealthzPerSec, r.Ratio)
	for _, f := range r.Ops {
		fmt.Fprintf(w, "  %-38s %7.0f /s   p50 %6.2f ms   p95 %6.2f ms   p99 %6.2f ms   (%d, %d errors)\n",
			f.Op, f.PerSec, f.P50ms, f.P95ms, f.P99ms, f.Requests, f.Errors)
	}
	if r.Deliveries > 0 {
		fmt.Fprintf(w, "  webhooks: %d writes, %d deliveries, all in %.1f s after the load stopped\n", r.Writes, r.Deliveries, r.DrainSeconds)
	}
	if r.ServiceCPUus > 0 {
		if r.Engine == "sqlite" {
			fmt.Fprintf(w, "  CPU per request: service %.0f µs (SQLite's work included: it runs in the service)\n", r.ServiceCPUus)
		} else {
			fmt.Fprintf(w, "  CPU per request: service %.0f µs, database %.0f µs\n", r.ServiceCPUus, r.DatabaseCPUus)
		}
	}
}

func send2(c *http.Client, method, u, token, body string) (int, []byte) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, u, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// httpTarget drives a running service with one API key: every client acts
// for that account (give it a limit the run cannot reach), profile reads are
// of the account itself, writes fan out to whatever endpoints it has, and
// messages are left out (they need a second account).
func httpTarget(ctx context.Context, o HTTPOptions) (*HTTPResult, error) {
	if o.APIKey == "" {
		return nil, errors.New("bench: --target needs --api-key")
	}
	c := newHTTPClient(o.Concurrency)
	status, b := send2(c, "GET", strings.TrimRight(o.Target[0], "/")+"/v1/users/me", o.APIKey, "")
	if status != 200 {
		return nil, fmt.Errorf("bench: GET /v1/users/me with the key answered %d: %s", status, truncate(string(b), 300))
	}
	var me struct {
		ID     string   `json:"id"`
		Sports []string `json:"sports"`
	}
	if err := json.Unmarshal(b, &me); err != nil {
		return nil, err
	}
	sport := "tennis"
	if len(me.Sports) > 0 {
		sport = me.Sports[0]
	}
	urls := make([]string, len(o.Target))
	for i, u := range o.Target {
		urls[i] = strings.TrimRight(u, "/")
	}
	workers := make([]*httpWorker, o.Concurrency)
	for i := range workers {
		workers[i] = &httpWorker{key: o.APIKey, sport: sport, rnd: rand.New(rand.NewPCG(uint64(i), 11)), others: []string{me.ID}}
	}
	rcv := &hookReceiver{}
	o.Hooks = 0
	ops := slices.DeleteFunc(mix(store.SeedWords()), func(p op) bool { return strings.Contains(p.name, "messages") })
	r, err := loadRun(ctx, o, urls, nil, nil, workers, ops, rcv, "running service")
	if err != nil {
		return nil, err
	}
	return &HTTPResult{Runs: []HTTPRun{*r}, Ratios: []float64{1}}, nil
}
