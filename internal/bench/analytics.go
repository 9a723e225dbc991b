package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/analytics"
	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/webhooks"
)

// AnalyticsOptions choose what the analytics bench measures.
type AnalyticsOptions struct {
	Options
	FlushInterval time.Duration // how often the counting service flushes
	Deliveries    int           // deliveries seeded in one endpoint's log
	PageRequests  int           // requests per dashboard page
}

// AnalyticsResult holds the figures the bench prints as JSON.
type AnalyticsResult struct {
	Engine string `json:"engine"`
	// Counting overhead: GET /v1/users/me with an API key, served by the
	// same code over the same database with and without request counting,
	// in interleaved rounds.
	CountingRates  [][2]float64 `json:"counting_rounds_req_per_s"` // [with, without] per round
	MedianRatio    float64      `json:"median_ratio_with_over_without"`
	OverheadPct    float64      `json:"overhead_pct"`
	RecordNs       float64      `json:"record_cpu_ns_per_call"`      // one Record call
	RecordSharePct float64      `json:"record_share_of_request_pct"` // of the CPU time of a request not counted
	// In process, without the network: median CPU ns per request [with,
	// without] over alternating blocks, and what counting adds.
	InProcessNs          [2]float64         `json:"in_process_cpu_ns_per_request"`
	InProcessOverheadPct float64            `json:"in_process_overhead_pct"`
	CountedOK            bool               `json:"every_request_counted"`
	Deliveries           int                `json:"deliveries_in_log"`
	PageP50Ms            map[string]float64 `json:"page_p50_ms"`
	PageP99Ms            map[string]float64 `json:"page_p99_ms"`
}

// Analytics measures what request counting adds to the fast request path,
// and how fast the dashboard's pages answer with a large delivery log.
func Analytics(ctx context.Context, o AnalyticsOptions, stdout, stderr io.Writer) (*AnalyticsResult, error) {
	o.Tune = func(c *config.Config) { c.AnalyticsFlushInterval = o.FlushInterval }
	e, err := start(ctx, o.Options)
	if err != nil {
		return nil, err
	}
	defer e.close()
	res := &AnalyticsResult{Engine: e.Engine, PageP50Ms: map[string]float64{}, PageP99Ms: map[string]float64{}}

	// The baseline: the same service, the same handler code over the same
	// services and database, counting nothing.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	baseURL := "http://" + ln.Addr().String()
	bsrv := &http.Server{Handler: e.app.HandlerWithoutCounting()}
	go bsrv.Serve(ln)
	defer bsrv.Close()

	flushCtx, stopFlush := context.WithCancel(ctx)
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		e.app.RunAnalytics(flushCtx, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	defer func() { stopFlush(); <-flushed }()

	huge := int64(1_000_000_000)
	if _, err := e.app.Users.SetTier(ctx, e.user.ID, auth.TierEnterprise, &huge); err != nil {
		return nil, err
	}
	k, key, err := e.app.Keys.Create(ctx, apikeys.Spec{UserID: e.user.ID, Name: "bench", Scopes: []string{auth.ScopeRead, auth.ScopeWrite}})
	if err != nil {
		return nil, err
	}
	c := newHTTPClient(o.Concurrency)
	with, without := e.url+"/v1/users/me", baseURL+"/v1/users/me"
	fmt.Fprintf(stderr, "bench analytics: %s, concurrency %d, %d rounds of %s, flush every %s\n", e.Engine, o.Concurrency, o.Rounds, o.Duration, o.FlushInterval)
	for _, u := range []string{with, without} {
		run("warm-up", o.Concurrency, 500*time.Millisecond, func(int) (bool, bool) { return get(c, u, key), true })
	}
	var sent int
	var ratios []float64
	for i := range o.Rounds {
		// Alternate which goes first, so neither always follows the other.
		order := []string{with, without}
		if i%2 == 1 {
			order = []string{without, with}
		}
		rates := map[string]Stats{}
		for _, u := range order {
			name := "GET /v1/users/me, counted"
			if u == without {
				name = "GET /v1/users/me, not counted"
			}
			rates[u] = run(name, o.Concurrency, o.Duration, func(int) (bool, bool) { return get(c, u, key), true })
		}
		w, wo := rates[with], rates[without]
		sent += w.Requests
		res.CountingRates = append(res.CountingRates, [2]float64{w.Rate(), wo.Rate()})
		ratios = append(ratios, w.Rate()/wo.Rate())
		fmt.Fprintf(stderr, "  round %d\n    %s\n    %s\n    ratio %.3f\n", i+1, w, wo, w.Rate()/wo.Rate())
	}
	slices.Sort(ratios)
	res.MedianRatio = ratios[len(ratios)/2]
	if len(ratios)%2 == 0 {
		res.MedianRatio = (ratios[len(ratios)/2-1] + ratios[len(ratios)/2]) / 2
	}
	res.OverheadPct = (1 - res.MedianRatio) * 100

	// Every request the counting service answered is in the rollups.
	if err := e.app.Requests.Flush(ctx); err != nil {
		return nil, err
	}
	var counted int64
	if err := e.app.DB.QueryRowContext(ctx, `SELECT COALESCE(SUM(requests), 0) FROM analytics_usage WHERE granularity = 'h' AND credential = $1
		AND operation = 'GET /v1/users/me'`, k.ID).Scan(&counted); err != nil {
		return nil, err
	}
	// The warm-up's requests are counted too; the rounds' are at least sent.
	res.CountedOK = counted >= int64(sent)
	fmt.Fprintf(stderr, "  counted %d requests of the %d the counted rounds sent (plus the warm-up)\n", counted, sent)

	// The same comparison without the network or the load generator: the
	// service's own time per request, one request at a time, in
	// alternating blocks.
	res.InProcessNs, res.InProcessOverheadPct = inProcess(e.app.Handler, e.app.HandlerWithoutCounting(), key, 60)
	fmt.Fprintf(stderr, "  in process, CPU per request: %.0f ns counted, %.0f ns not counted: counting adds %.2f %%\n",
		res.InProcessNs[0], res.InProcessNs[1], res.InProcessOverheadPct)

	// What counting itself costs: one Record call, against the CPU time of
	// the whole request.
	res.RecordNs = recordCost()
	res.RecordSharePct = res.RecordNs / res.InProcessNs[1] * 100
	fmt.Fprintf(stderr, "  Record: %.0f ns of CPU a call, %.2f %% of a request's %.0f ns\n", res.RecordNs, res.RecordSharePct, res.InProcessNs[1])

	if err := dashboardPages(ctx, e, o, k, res, stderr); err != nil {
		return nil, err
	}
	return res, nil
}

// inProcess serves GET /v1/users/me straight to the two handlers, one
// request at a time, in pairs of blocks of 500 (which goes first
// alternates), and returns the median CPU time of the process per request
// of each and the median of the pairs' ratios, as what counting adds in per
// cent. Pairs run back to back, so each ratio compares like with like while
// the machine's load drifts; CPU time moves less with that load than wall
// time (used where CPU time cannot be read).
func inProcess(with, without http.Handler, key string, pairs int) ([2]float64, float64) {
	clock := processCPU
	if clock() == 0 {
		start := time.Now()
		clock = func() time.Duration { return time.Since(start) }
	}
	serve := func(h http.Handler, n int) float64 {
		// Each block starts with no garbage left by the one before.
		runtime.GC()
		c0 := clock()
		for range n {
			req := httptest.NewRequest(http.MethodGet, "/v1/users/me", nil)
			req.Header.Set("Authorization", "Bearer "+key)
			h.ServeHTTP(httptest.NewRecorder(), req)
		}
		return float64((clock() - c0).Nanoseconds()) / float64(n)
	}
	serve(with, 300)
	serve(without, 300)
	var w, wo, ratios []float64
	for i := range pairs {
		var a, b float64
		if i%2 == 0 {
			a = serve(with, 500)
			b = serve(without, 500)
		} else {
			b = serve(without, 500)
			a = serve(with, 500)
		}
		w, wo = append(w, a), append(wo, b)
		if b > 0 {
			ratios = append(ratios, a/b)
		}
	}
	med := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	return [2]float64{med(w), med(wo)}, (med(ratios) - 1) * 100
}

// recordCost is the CPU time of one Record call, what counting adds to a
// request: one goroutine, 1,000,000 calls over 50 operations and 10
// credentials, on a recorder of its own that never flushes (the service's
// would write these counts to the database).
func recordCost() float64 {
	rec := analytics.NewRecorder(nil, clock.Real{}, nil)
	ops := make([]string, 50)
	for i := range ops {
		ops[i] = fmt.Sprintf("GET /v1/op%d", i)
	}
	creds := make([]string, 10)
	for i := range creds {
		creds[i] = fmt.Sprint("key_", i)
	}
	const n = 1_000_000
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, t0 := threadCPU(), time.Now()
	for i := range n {
		rec.Record("usr_bench", creds[i%len(creds)], ops[i%len(ops)], "usr_bench", 200, time.Duration(i%5000)*time.Microsecond)
	}
	took := threadCPU() - c0
	if took == 0 {
		took = time.Since(t0)
	}
	return float64(took.Nanoseconds()) / n
}

// dashboardPages seeds o.Deliveries deliveries, spread over 30 days, in one
// endpoint's log and times the dashboard's pages for a signed-in browser.
func dashboardPages(ctx context.Context, e *env, o AnalyticsOptions, k *apikeys.Key, res *AnalyticsResult, stderr io.Writer) error {
	cred := &auth.Principal{UserID: e.user.ID, APIKeyID: k.ID, Scopes: k.Scopes, AccountID: e.user.ID, Tier: auth.TierEnterprise}
	sub, _, err := e.app.Webhooks.Create(ctx, cred, webhooks.Spec{URL: "https://hooks.example/bench", Events: []string{"user.*"}})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "  seeding %d deliveries in one endpoint's log\n", o.Deliveries)
	now := time.Now()
	rng := rand.New(rand.NewPCG(1, 2))
	const batch = 500
	for from := 0; from < o.Deliveries; from += batch {
		n := min(batch, o.Deliveries-from)
		var dv, at []string
		var dargs, aargs []any
		for i := range n {
			idx := from + i
			created := now.Add(-30 * 24 * time.Hour).Add(time.Duration(idx) * 30 * 24 * time.Hour / time.Duration(o.Deliveries))
			status, code, ok := webhooks.DeliverySucceeded, 200, true
			switch r := rng.IntN(100); {
			case r < 6:
				status, code, ok = webhooks.DeliveryFailed, 503, false
			case r < 8 && idx > o.Deliveries-50:
				status = webhooks.DeliveryPending
			}
			id := ids.New(ids.Delivery)
			j := len(dargs)
			dv = append(dv, fmt.Sprintf("($%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d)", j+1, j+2, j+3, j+4, j+5, j+6, j+7, j+8))
			var completed any
			if status != webhooks.DeliveryPending {
				completed = created.Add(time.Second).UnixMicro()
			}
			dargs = append(dargs, id, sub.ID, "whe_bench"+fmt.Sprint(idx), "user.updated", status, created.UnixMicro(), created.UnixMicro(), completed)
			if status == webhooks.DeliveryPending {
				continue
			}
			j = len(aargs)
			at = append(at, fmt.Sprintf("($%d, 1, $%d, $%d, $%d, $%d, $%d, $%d)", j+1, j+2, j+3, j+4, j+5, j+6, j+7))
			aargs = append(aargs, id, sub.ID, created.UnixMicro(), int64(2000+rng.IntN(200_000)), ok, code, `{"ok":true}`)
		}
		if _, err := e.app.DB.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, subscription_id, event_id, event_type, status,
			next_attempt_at, created_at, completed_at) VALUES `+strings.Join(dv, ", "), dargs...); err != nil {
			return fmt.Errorf("bench: seed deliveries: %w", err)
		}
		if len(at) > 0 {
			if _, err := e.app.DB.ExecContext(ctx, `INSERT INTO webhook_attempts (delivery_id, number, subscription_id, started_at,
				duration_us, ok, status_code, response) VALUES `+strings.Join(at, ", "), aargs...); err != nil {
				return fmt.Errorf("bench: seed attempts: %w", err)
			}
		}
	}
	res.Deliveries = o.Deliveries
	if err := e.app.DB.Analyze(ctx); err != nil {
		return err
	}
	tok, err := e.app.Sessions.Start(ctx, e.user.ID)
	if err != nil {
		return err
	}
	cookie := "mp_session=" + tok
	// A cursor halfway down the log.
	var mid string
	if err := e.app.DB.QueryRowContext(ctx, `SELECT id FROM webhook_deliveries WHERE subscription_id = $1 ORDER BY id LIMIT 1 OFFSET $2`,
		sub.ID, o.Deliveries/2).Scan(&mid); err != nil {
		return err
	}
	pages := []struct{ name, path string }{
		{"webhook (log, stats, charts)", "/dashboard/webhooks/" + sub.ID},
		{"webhook, failed only", "/dashboard/webhooks/" + sub.ID + "?status=failed"},
		{"webhook, page in the middle", "/dashboard/webhooks/" + sub.ID + "?before=" + mid},
		{"webhooks", "/dashboard/webhooks"},
		{"overview", "/dashboard"},
		{"usage", "/dashboard/usage?granularity=day&group_by=operation"},
		{"keys", "/dashboard/keys"},
	}
	c := newHTTPClient(1)
	page := func(path string) bool {
		req, _ := http.NewRequest(http.MethodGet, e.url+path, nil)
		req.Header.Set("Cookie", cookie)
		r, err := c.Do(req)
		if err != nil {
			return false
		}
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
		return r.StatusCode == http.StatusOK
	}
	for _, pg := range pages {
		if !page(pg.path) {
			return fmt.Errorf("bench: %s did not answer 200", pg.path)
		}
		var lat []time.Duration
		for range o.PageRequests {
			t0 := time.Now()
			if !page(pg.path) {
				return fmt.Errorf("bench: %s failed", pg.path)
			}
			lat = append(lat, time.Since(t0))
		}
		slices.Sort(lat)
		p50, p99 := lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
		res.PageP50Ms[pg.name], res.PageP99Ms[pg.name] = ms(p50), ms(p99)
		fmt.Fprintf(stderr, "  %-30s p50 %6.2f ms   p99 %6.2f ms   (%d requests, one at a time)\n", pg.name, ms(p50), ms(p99), len(lat))
	}
	return nil
}
