// Package bench measures the service the way clients use it: real HTTP on
// loopback against a real database, with a baseline run in the same process
// so the figure to read is a ratio, not a number this noisy machine made up.
package bench

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// Options choose what to measure.
type Options struct {
	DatabaseURL string        // postgres://... to use PostgreSQL (a fresh schema, dropped after); empty: a temporary SQLite file
	Concurrency int           // client goroutines
	Duration    time.Duration // per measured round (api)
	Rounds      int           // rounds of each configuration, interleaved (api)
	Grants      int           // grants per grant type (token)
	RedisURL    string        // count rate limits in this Redis (fastpath); empty: in process
	InProcess   bool          // serve from the bench process instead of a "matchpoint serve" child (fastpath)
	Binary      string        // the matchpoint binary to run as the service (fastpath); default: this executable
	Wrk         bool          // generate the load with wrk instead of this process's HTTP clients (fastpath)
	Keys        int           // API keys, of as many accounts, the clients share round robin (fastpath)

	// Tune, if set, changes the service's settings before it starts.
	Tune func(*config.Config)
}

// benchPassword is the password of the bench's accounts; it must pass the
// service's rules (no username inside, not a common one).
const benchPassword = "throwaway measuring secret 7"

// env is a service on a throwaway database, with one user and one client.
type env struct {
	app     *app.App
	url     string
	srv     *http.Server
	user    *users.User
	client  *oauth.Client
	secret  string
	cleanup []func()
	Engine  string
	dbURL   string
	appName string // application_name of its PostgreSQL connections
	node    *node  // the service process, when not served in process (fastpath)
}

func (e *env) close() {
	for i := len(e.cleanup) - 1; i >= 0; i-- {
		e.cleanup[i]()
	}
}

func start(ctx context.Context, o Options) (*env, error) {
	e := &env{}
	dbURL := o.DatabaseURL
	if dbURL == "" {
		dir, err := os.MkdirTemp("", "matchpoint-bench-")
		if err != nil {
			return nil, err
		}
		e.cleanup = append(e.cleanup, func() { os.RemoveAll(dir) })
		dbURL = "sqlite:" + filepath.Join(dir, "bench.db")
		e.Engine = "sqlite"
	} else {
		u, drop, err := freshSchema(dbURL)
		if err != nil {
			return nil, err
		}
		e.cleanup = append(e.cleanup, drop)
		dbURL, e.Engine = u, "postgres"
		if pu, err := url.Parse(u); err == nil {
			e.appName = pu.Query().Get("application_name")
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.close()
		return nil, err
	}
	e.url = "http://" + ln.Addr().String()
	e.dbURL = dbURL
	cfg := config.Config{DatabaseURL: dbURL, BaseURL: e.url, DocsURL: e.url + "/docs/errors", RedisURL: o.RedisURL}
	if o.Tune != nil {
		o.Tune(&cfg)
	}
	a, err := app.Open(ctx, cfg, app.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		ln.Close()
		e.close()
		return nil, err
	}
	e.app = a
	e.cleanup = append(e.cleanup, func() { a.Close() })
	e.srv = &http.Server{Handler: a.Handler}
	go e.srv.Serve(ln)
	e.cleanup = append(e.cleanup, func() { e.srv.Close() })

	if e.user, err = a.Users.Register(ctx, users.Registration{Email: "bench@example.com", Username: "bench", Password: benchPassword}); err != nil {
		e.close()
		return nil, err
	}
	// The bench account pays for Enterprise: its default allowance (a
	// million requests an hour) is out of a run's reach, so every request is
	// still rate-limited and counted, and none is refused.
	if _, err := a.Users.SetTier(ctx, e.user.ID, "enterprise", nil); err != nil {
		e.close()
		return nil, err
	}
	sys, err := a.Users.EnsureSystemAccount(ctx)
	if err != nil {
		e.close()
		return nil, err
	}
	if e.client, e.secret, err = a.OAuth.RegisterClient(ctx, oauth.ClientSpec{Name: "Bench", OwnerID: sys.ID,
		RedirectURIs: []string{"http://127.0.0.1:9/cb"}}); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

// freshSchema makes a schema of its own on the PostgreSQL server, so a
// benchmark never touches real data.
func freshSchema(base string) (string, func(), error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "bench_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return "", nil, err
	}
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		admin.Close()
		return "", nil, err
	}
	drop := func() { _, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE"); admin.Close() }
	u, err := url.Parse(base)
	if err != nil {
		drop()
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	q.Set("application_name", schema) // names its server processes, for bench fastpath's CPU figures
	u.RawQuery = q.Encode()
	return u.String(), drop, nil
}

// code issues an authorization code without the browser pages.
func (e *env) code(ctx context.Context) (string, error) {
	req, err := e.app.OAuth.ParseAuthorize(ctx, url.Values{"client_id": {e.client.ID}, "redirect_uri": {e.client.RedirectURIs[0]},
		"response_type": {"code"}, "scope": {"read write"}})
	if err != nil {
		return "", err
	}
	return e.app.OAuth.Approve(ctx, e.user.ID, req)
}

func newHTTPClient(conc int) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: conc, MaxConnsPerHost: conc}}
}

// Stats is the outcome of one measured run.
type Stats struct {
	Name     string
	Requests int
	Errors   int
	Elapsed  time.Duration
	P50, P99 time.Duration
}

// Rate is requests per second.
func (s Stats) Rate() float64 { return float64(s.Requests) / s.Elapsed.Seconds() }

func (s Stats) String() string {
	return fmt.Sprintf("%-34s %9.0f /s   p50 %6.2f ms   p99 %6.2f ms   (%d requests, %d errors)",
		s.Name, s.Rate(), ms(s.P50), ms(s.P99), s.Requests, s.Errors)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// run calls work from conc goroutines until deadline, or until work says
// there is nothing left, and gathers latencies.
func run(name string, conc int, d time.Duration, work func(worker int) (ok bool, more bool)) Stats {
	var mu sync.Mutex
	var lat []time.Duration
	errs := 0
	deadline := time.Now().Add(d)
	begin := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			bad := 0
			for time.Now().Before(deadline) {
				t0 := time.Now()
				ok, more := work(w)
				if !more {
					break
				}
				mine = append(mine, time.Since(t0))
				if !ok {
					bad++
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			errs += bad
			mu.Unlock()
		}()
	}
	wg.Wait()
	st := Stats{Name: name, Requests: len(lat), Errors: errs, Elapsed: time.Since(begin)}
	if len(lat) > 0 {
		slices.Sort(lat)
		st.P50, st.P99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	return st
}

func get(c *http.Client, u, token string) bool {
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := c.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

func postForm(c *http.Client, u string, form url.Values) (int, []byte) {
	res, err := c.Post(u, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		return 0, nil
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}
