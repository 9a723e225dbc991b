package bench

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// FastPathResult holds the rounds of GET /healthz and GET /v1/users/me.
type FastPathResult struct {
	Engine    string
	Limiter   string // local or redis
	Health    []Stats
	Me        []Stats
	HealthCPU []Cost
	MeCPU     []Cost
}

// Cost is the CPU time one request took, on average over a round: in the
// load generator, the service and the database server.
type Cost struct{ Client, Service, Database time.Duration }

// Total is the whole machine's CPU time per request.
func (c Cost) Total() time.Duration { return c.Client + c.Service + c.Database }

func (c Cost) String() string {
	return fmt.Sprintf("CPU per request: load generator %4.0f µs, service %4.0f µs, database %4.0f µs, total %4.0f µs",
		us(c.Client), us(c.Service), us(c.Database), us(c.Total()))
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }

// medianCost is the round with the median total.
func medianCost(cs []Cost) Cost {
	s := slices.SortedFunc(slices.Values(cs), func(a, b Cost) int { return int(a.Total() - b.Total()) })
	return s[len(s)/2]
}

// Ratios are the per-round ratios of /v1/users/me's rate to /healthz's.
func (r FastPathResult) Ratios() []float64 {
	var out []float64
	for i := range r.Me {
		out = append(out, r.Me[i].Rate()/r.Health[i].Rate())
	}
	return out
}

// Median is the median per-round ratio: the figure to quote, least moved by
// what else the machine was doing in one round.
func (r FastPathResult) Median() float64 {
	rs := slices.Sorted(slices.Values(r.Ratios()))
	if len(rs) == 0 {
		return 0
	}
	if len(rs)%2 == 1 {
		return rs[len(rs)/2]
	}
	return (rs[len(rs)/2-1] + rs[len(rs)/2]) / 2
}

// FastPath measures, from outside the service, how close an authenticated,
// rate-limited API read comes to the cheapest request the service answers:
// GET /v1/users/me with an API key (authentication, the rate limiter, the
// profile read, JSON) against GET /healthz (no database, no limiter), in
// interleaved rounds of a closed-loop load (each client sends its next
// request when the last is answered). The service runs as its own
// "matchpoint serve" process, unless o.InProcess, which serves from this
// process so that --cpuprofile sees the server's work.
func FastPath(ctx context.Context, o Options, out io.Writer) (*FastPathResult, error) {
	e, err := start(ctx, o)
	if err != nil {
		return nil, err
	}
	defer e.close()
	// The accounts are Enterprise with a limit the run cannot reach: every
	// request is counted and answered with its headers, none refused. With
	// --keys N, client i uses key i mod N, each of its own account, so that
	// concurrent requests do not all look up the same key.
	huge := int64(1_000_000_000)
	keys := make([]string, max(o.Keys, 1))
	for i := range keys {
		u := e.user
		if i > 0 {
			if u, err = e.app.Users.Register(ctx, users.Registration{Email: fmt.Sprintf("bench%d@example.com", i),
				Username: fmt.Sprintf("bench%d", i), Password: benchPassword}); err != nil {
				return nil, err
			}
		}
		if _, err := e.app.Users.SetTier(ctx, u.ID, auth.TierEnterprise, &huge); err != nil {
			return nil, err
		}
		if _, keys[i], err = e.app.Keys.Create(ctx, apikeys.Spec{UserID: u.ID, Name: "bench", Scopes: []string{auth.ScopeRead}}); err != nil {
			return nil, err
		}
	}
	key := keys[0]
	if o.Wrk && len(keys) > 1 {
		return nil, fmt.Errorf("bench: --keys needs the Go load generator (wrk sends one header to every request)")
	}
	base, where := e.url, "in the bench process"
	if !o.InProcess {
		if e.node, err = startServe(ctx, e, o); err != nil {
			return nil, err
		}
		defer e.node.stop()
		base, where = e.node.url, "as a separate matchpoint serve process"
	}
	res := &FastPathResult{Engine: e.Engine, Limiter: "local"}
	if o.RedisURL != "" {
		res.Limiter = "redis"
	}
	c := newHTTPClient(o.Concurrency)
	health, me := base+"/healthz", base+"/v1/users/me"
	if err := check(c, me, key); err != nil {
		return nil, err
	}
	generator := "this process's HTTP clients"
	if o.Wrk {
		generator = "wrk"
	}
	fmt.Fprintf(out, "bench fastpath: %s, rate limits counted %s, service %s, load from %s; concurrency %d, %d API key(s), %d rounds of %s each, interleaved\n",
		e.Engine, map[string]string{"local": "in process", "redis": "in Redis"}[res.Limiter], where, generator, o.Concurrency, len(keys), o.Rounds, o.Duration)
	warm := func(u, tok string) {
		run("warm-up", o.Concurrency, 500*time.Millisecond, func(int) (bool, bool) { return get(c, u, tok), true })
	}
	warm(health, "")
	warm(me, key)
	// Who burns CPU for a request: this process (the load generator, and in
	// process mode the service too), the service process, and the database
	// server's processes serving the service's connections.
	self, servicePID := os.Getpid(), 0
	if !o.InProcess {
		servicePID = e.node.cmd.Process.Pid
	}
	var admin *sql.DB
	if e.Engine == "postgres" {
		if admin, err = sql.Open("pgx", o.DatabaseURL); err != nil {
			return nil, err
		}
		defer admin.Close()
	}
	measure := func(name, u, tok string) (Stats, Cost, error) {
		var dbBefore map[int]time.Duration
		if admin != nil {
			dbBefore = map[int]time.Duration{}
			for _, pid := range backends(ctx, admin, e.appName) {
				dbBefore[pid] = cpuOf(pid)
			}
		}
		clientBefore, serviceBefore := cpuOf(self), cpuOf(servicePID)
		var st Stats
		var err error
		if o.Wrk {
			st, err = runWrk(ctx, name, o, u, tok)
		} else {
			st = run(name, o.Concurrency, o.Duration, func(w int) (bool, bool) {
				if tok == "" {
					return get(c, u, ""), true
				}
				return get(c, u, keys[w%len(keys)]), true
			})
		}
		if err != nil || st.Requests == 0 {
			return st, Cost{}, err
		}
		n := time.Duration(st.Requests)
		cost := Cost{Client: (cpuOf(self) - clientBefore) / n, Service: (cpuOf(servicePID) - serviceBefore) / n}
		if o.Wrk {
			cost.Client = 0 // wrk's own CPU is not read
		}
		if admin != nil {
			var db time.Duration
			for _, pid := range backends(ctx, admin, e.appName) {
				db += cpuOf(pid) - dbBefore[pid]
			}
			cost.Database = db / n
		}
		return st, cost, nil
	}
	for i := 0; i < o.Rounds; i++ {
		h, hc, err := measure("GET /healthz", health, "")
		if err != nil {
			return res, err
		}
		m, mc, err := measure("GET /v1/users/me (API key)", me, key)
		if err != nil {
			return res, err
		}
		res.Health, res.Me = append(res.Health, h), append(res.Me, m)
		res.HealthCPU, res.MeCPU = append(res.HealthCPU, hc), append(res.MeCPU, mc)
		fmt.Fprintf(out, "  round %d   ratio %.2f\n    %s\n      %s\n    %s\n      %s\n", i+1, m.Rate()/h.Rate(), h, hc, m, mc)
		if h.Errors > 0 || m.Errors > 0 {
			return res, fmt.Errorf("bench: round %d had failed requests", i+1)
		}
	}
	hc, mc := medianCost(res.HealthCPU), medianCost(res.MeCPU)
	fmt.Fprintf(out, "  median CPU per request: /healthz %.0f µs, /v1/users/me %.0f µs (service %.0f, database %.0f)\n",
		us(hc.Total()), us(mc.Total()), us(mc.Service), us(mc.Database))
	fmt.Fprintf(out, "  ratio /v1/users/me : /healthz = %.2f (median of %d rounds; per round %s)\n",
		res.Median(), len(res.Me), fmtRatios(res.Ratios()))
	return res, nil
}

func fmtRatios(rs []float64) string {
	s := ""
	for i, r := range rs {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%.2f", r)
	}
	return s
}

// check makes sure the measured request is what it claims: answered 200
// with the rate-limit headers.
func check(c *http.Client, u, key string) error {
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("X-RateLimit-Limit") == "" || res.Header.Get("RateLimit") == "" {
		return fmt.Errorf("bench: GET /v1/users/me answered %d without rate-limit headers", res.StatusCode)
	}
	return nil
}

// runWrk measures u with wrk (a closed-loop generator in C: each connection
// sends its next request when the last is answered), two threads.
func runWrk(ctx context.Context, name string, o Options, u, token string) (Stats, error) {
	args := []string{"-t2", "-c" + strconv.Itoa(max(o.Concurrency, 2)), "-d" + strconv.Itoa(max(int(o.Duration.Seconds()), 1)) + "s", "--latency"}
	if token != "" {
		args = append(args, "-H", "Authorization: Bearer "+token)
	}
	out, err := exec.CommandContext(ctx, "wrk", append(args, u)...).CombinedOutput()
	if err != nil {
		return Stats{}, fmt.Errorf("bench: wrk: %v\n%s", err, out)
	}
	st := Stats{Name: name + " [wrk]"}
	var secs float64
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 5 && f[1] == "requests" && f[2] == "in":
			st.Requests, _ = strconv.Atoi(f[0])
			secs, _ = strconv.ParseFloat(strings.TrimSuffix(strings.TrimSuffix(f[3], ","), "s"), 64)
		case len(f) == 2 && f[0] == "50%":
			st.P50 = wrkDuration(f[1])
		case len(f) == 2 && f[0] == "99%":
			st.P99 = wrkDuration(f[1])
		case len(f) >= 4 && f[0] == "Non-2xx":
			st.Errors, _ = strconv.Atoi(f[len(f)-1])
		case len(f) >= 2 && f[0] == "Socket" && f[1] == "errors:":
			st.Errors++
		}
	}
	if st.Requests == 0 || secs == 0 {
		return st, fmt.Errorf("bench: could not read wrk's output:\n%s", out)
	}
	st.Elapsed = time.Duration(secs * float64(time.Second))
	return st, nil
}

// wrkDuration reads wrk's "1.23ms", "456.00us" or "1.01s".
func wrkDuration(s string) time.Duration {
	for _, u := range []struct {
		suffix string
		unit   time.Duration
	}{{"us", time.Microsecond}, {"ms", time.Millisecond}, {"s", time.Second}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return time.Duration(f * float64(u.unit))
		}
	}
	return 0
}

// node is a "matchpoint serve" process over the bench's database.
type node struct {
	url string
	cmd *exec.Cmd
}

func (n *node) stop() {
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = n.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = n.cmd.Process.Kill()
		<-done
	}
}

// startServe runs this very binary as "matchpoint serve" on a free loopback
// port over e's database, with extra environment variables (KEY=value), and
// waits until it is ready. Its log (one access line per request, as in
// production) goes to a file beside the database.
func startServe(ctx context.Context, e *env, o Options, extraEnv ...string) (*node, error) {
	bin := o.Binary
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	logFile, err := os.CreateTemp("", "matchpoint-bench-serve-*.log")
	if err != nil {
		return nil, err
	}
	e.cleanup = append(e.cleanup, func() { logFile.Close(); os.Remove(logFile.Name()) })
	args := []string{"serve", "--addr", addr, "--database-url", e.dbURL, "--log-format", "json"}
	if o.RedisURL != "" {
		args = append(args, "--redis-url", o.RedisURL)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), "MATCHPOINT_REDIS_URL="), extraEnv...) // Redis only as the flags say
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: start %s serve: %w", filepath.Base(bin), err)
	}
	n := &node{url: "http://" + addr, cmd: cmd}
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := http.Get(n.url + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return n, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			n.stop()
			b, _ := os.ReadFile(logFile.Name())
			return nil, fmt.Errorf("bench: matchpoint serve did not become ready:\n%s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
