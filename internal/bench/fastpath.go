package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/auth"
)

// FastPathResult holds the rounds of GET /healthz and GET /v1/users/me.
type FastPathResult struct {
	Engine  string
	Limiter string // local or redis
	Health  []Stats
	Me      []Stats
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
	// The account is Enterprise with a limit the run cannot reach: every
	// request is counted and answered with its headers, none refused.
	huge := int64(1_000_000_000)
	if _, err := e.app.Users.SetTier(ctx, e.user.ID, auth.TierEnterprise, &huge); err != nil {
		return nil, err
	}
	_, key, err := e.app.Keys.Create(ctx, apikeys.Spec{UserID: e.user.ID, Name: "bench", Scopes: []string{auth.ScopeRead}})
	if err != nil {
		return nil, err
	}
	base, where := e.url, "in the bench process"
	if !o.InProcess {
		node, err := startServe(ctx, e, o)
		if err != nil {
			return nil, err
		}
		defer node.stop()
		base, where = node.url, "as a separate matchpoint serve process"
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
	fmt.Fprintf(out, "bench fastpath: %s, rate limits counted %s, service %s; concurrency %d, %d rounds of %s each, interleaved\n",
		e.Engine, map[string]string{"local": "in process", "redis": "in Redis"}[res.Limiter], where, o.Concurrency, o.Rounds, o.Duration)
	warm := func(u, tok string) {
		run("warm-up", o.Concurrency, 500*time.Millisecond, func(int) (bool, bool) { return get(c, u, tok), true })
	}
	warm(health, "")
	warm(me, key)
	for i := 0; i < o.Rounds; i++ {
		h := run("GET /healthz", o.Concurrency, o.Duration, func(int) (bool, bool) { return get(c, health, ""), true })
		m := run("GET /v1/users/me (API key)", o.Concurrency, o.Duration, func(int) (bool, bool) { return get(c, me, key), true })
		res.Health, res.Me = append(res.Health, h), append(res.Me, m)
		fmt.Fprintf(out, "  round %d   ratio %.2f\n    %s\n    %s\n", i+1, m.Rate()/h.Rate(), h, m)
		if h.Errors > 0 || m.Errors > 0 {
			return res, fmt.Errorf("bench: round %d had failed requests", i+1)
		}
	}
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
// port over e's database, and waits until it is ready. Its log (one access
// line per request, as in production) goes to a file beside the database.
func startServe(ctx context.Context, e *env, o Options) (*node, error) {
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
	cmd.Env = append(os.Environ(), "MATCHPOINT_REDIS_URL=") // only what the flags say
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
