package e2e

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
	"github.com/matchpoint-api/matchpoint/internal/ratelimit"
	"github.com/matchpoint-api/matchpoint/internal/ratelimit/redistest"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// wantLimit checks the rate-limit headers of a response.
func wantLimit(t *testing.T, s *apptest.Server, r resp, policy string, limit, remaining, nextSeconds int64, full time.Duration) {
	t.Helper()
	h := r.Header
	checks := map[string]string{
		"RateLimit-Policy":      `"` + policy + `";q=` + strconv.FormatInt(limit, 10) + ";w=3600",
		"RateLimit":             `"` + policy + `";r=` + strconv.FormatInt(remaining, 10) + ";t=" + strconv.FormatInt(nextSeconds, 10),
		"X-RateLimit-Limit":     strconv.FormatInt(limit, 10),
		"X-RateLimit-Remaining": strconv.FormatInt(remaining, 10),
		"X-RateLimit-Reset":     strconv.FormatInt(int64(math.Ceil(float64(s.Clock.Now().Add(full).UnixMicro())/1e6)), 10),
	}
	for name, want := range checks {
		if got := h.Get(name); got != want {
			t.Errorf("%s = %q, want %q (status %d)", name, got, want, r.Status)
		}
	}
}

func get(t *testing.T, s *apptest.Server, path, token string) resp {
	t.Helper()
	return api(t, s, http.MethodGet, path, token, "")
}

// TestRateLimitPerAccount: a Free account spends its 1000 requests at once,
// whichever key it uses and whatever the answers; the 1001st is refused with
// 429, Retry-After and the headers; one more is earned every 3.6 s; a change
// of tier applies to the next request.
func TestRateLimitPerAccount(t *testing.T) {
	apptest.EachLimiter(t, func(t *testing.T, s *apptest.Server) {
		ann := s.User(t, "ann")
		key, other := keyOf(t, s.App, ann.ID, "read"), keyOf(t, s.App, ann.ID, "read", "write")

		r := get(t, s, "/v1/users/me", key)
		if r.Status != 200 {
			t.Fatalf("first request: %d %s", r.Status, r.Body)
		}
		wantLimit(t, s, r, "hourly", 1000, 999, 4, 3600*time.Millisecond)
		// Errors count and carry the headers too.
		r = get(t, s, "/v1/users/usr_nobody", other)
		if r.Status != 404 {
			t.Fatalf("missing user: %d", r.Status)
		}
		wantLimit(t, s, r, "hourly", 1000, 998, 4, 7200*time.Millisecond)

		for i := 3; i <= 1000; i++ {
			if r = get(t, s, "/v1/users/me", key); r.Status != 200 {
				t.Fatalf("request %d: %d %s", i, r.Status, r.Body)
			}
		}
		wantLimit(t, s, r, "hourly", 1000, 0, 4, time.Hour)

		r = get(t, s, "/v1/users/me", other)
		wantProblem(t, s, r, 429, "rate_limited", "")
		if got := r.Header.Get("Retry-After"); got != "4" {
			t.Errorf("Retry-After = %q, want 4 (3.6 s rounded up)", got)
		}
		wantLimit(t, s, r, "hourly", 1000, 0, 4, time.Hour)

		s.Clock.Advance(3599 * time.Millisecond)
		if r = get(t, s, "/v1/users/me", key); r.Status != 429 || r.Header.Get("Retry-After") != "1" {
			t.Fatalf("1 ms early: %d, Retry-After %q", r.Status, r.Header.Get("Retry-After"))
		}
		s.Clock.Advance(time.Millisecond)
		if r = get(t, s, "/v1/users/me", key); r.Status != 200 {
			t.Fatalf("after 3.6 s: %d %s", r.Status, r.Body)
		}
		wantLimit(t, s, r, "hourly", 1000, 0, 4, time.Hour)
		if r = get(t, s, "/v1/users/me", key); r.Status != 429 {
			t.Fatalf("second after 3.6 s: %d", r.Status)
		}

		// Upgraded: the 1000 spent count against Pro's 10000 at once.
		if _, err := s.App.Users.SetTier(context.Background(), ann.ID, users.TierPro, nil); err != nil {
			t.Fatal(err)
		}
		r = get(t, s, "/v1/users/me", key)
		if r.Status != 200 {
			t.Fatalf("after the upgrade: %d %s", r.Status, r.Body)
		}
		wantLimit(t, s, r, "hourly", 10000, 8999, 1, 1001*360*time.Millisecond)
		limit := int64(5000)
		if _, err := s.App.Users.SetTier(context.Background(), ann.ID, users.TierEnterprise, &limit); err != nil {
			t.Fatal(err)
		}
		r = get(t, s, "/v1/users/me", key)
		wantLimit(t, s, r, "hourly", 5000, 3998, 1, 1002*720*time.Millisecond)
	})
}

// TestRateLimitPaidByClientOwner: requests through a third-party OAuth
// client are counted against the client's owner, whoever the user; through
// the service's own clients, against the user.
func TestRateLimitPaidByClientOwner(t *testing.T) {
	apptest.EachLimiter(t, func(t *testing.T, s *apptest.Server) {
		dev := s.User(t, "dev")
		c, secret := s.Client(t, oauth.ClientSpec{OwnerID: dev.ID, Name: "Court Finder", RedirectURIs: []string{"http://127.0.0.1:9/callback"}})
		var tokens []string
		for _, name := range []string{"ann", "bob"} {
			f := &flow{t: t, s: s, client: c, secret: secret, user: s.User(t, name), br: s.NewBrowser(t)}
			tokens = append(tokens, str(f.tokens("read"), "access_token"))
		}
		for i, tok := range tokens {
			r := get(t, s, "/v1/users/me", tok)
			if r.Status != 200 {
				t.Fatalf("user %d: %d %s", i, r.Status, r.Body)
			}
			if got := r.Header.Get("X-RateLimit-Remaining"); got != strconv.Itoa(999-i) {
				t.Errorf("user %d: remaining %s, want %d: both users spend the developer's allowance", i, got, 999-i)
			}
		}
		r := get(t, s, "/v1/users/me", keyOf(t, s.App, dev.ID, "read"))
		if got := r.Header.Get("X-RateLimit-Remaining"); got != "997" {
			t.Errorf("the developer's own key: remaining %s, want 997", got)
		}

		// A first-party client: the user pays (Enterprise system account aside).
		fp := newFlow(t, s, "cat", oauth.ClientSpec{Name: "Matchpoint"})
		r = get(t, s, "/v1/users/me", str(fp.tokens("read"), "access_token"))
		if r.Status != 200 || r.Header.Get("X-RateLimit-Limit") != "1000" || r.Header.Get("X-RateLimit-Remaining") != "999" {
			t.Errorf("first-party client: %d, limit %s remaining %s, want the user's own 1000",
				r.Status, r.Header.Get("X-RateLimit-Limit"), r.Header.Get("X-RateLimit-Remaining"))
		}
	})
}

// TestRateLimitAnonymous: without a valid credential, the client IP is
// counted (1000 an hour by default), and a forged X-Forwarded-For from a
// client that is not a trusted proxy changes nothing.
func TestRateLimitAnonymous(t *testing.T) {
	apptest.EachLimiter(t, func(t *testing.T, s *apptest.Server) {
		r := get(t, s, "/v1/users/me", "")
		wantProblem(t, s, r, 401, "unauthenticated", "")
		wantLimit(t, s, r, "anonymous", 1000, 999, 4, 3600*time.Millisecond)
		r = get(t, s, "/v1/users/me", "mpk_live_not_a_real_key")
		wantProblem(t, s, r, 401, "invalid_token", "")
		wantLimit(t, s, r, "anonymous", 1000, 998, 4, 7200*time.Millisecond)
		for i := 3; i <= 1000; i++ {
			req, _ := http.NewRequest(http.MethodGet, s.URL+"/v1/users/me", nil)
			req.Header.Set("X-Forwarded-For", "203.0.113."+strconv.Itoa(i%250))
			if r = do(t, req); r.Status != 401 {
				t.Fatalf("request %d: %d", i, r.Status)
			}
		}
		r = get(t, s, "/v1/users/me", "")
		wantProblem(t, s, r, 429, "rate_limited", "")
		wantLimit(t, s, r, "anonymous", 1000, 0, 4, time.Hour)

		// Accounts are not affected by their IP's anonymous allowance.
		if r = get(t, s, "/v1/users/me", keyOf(t, s.App, s.User(t, "ann").ID, "read")); r.Status != 200 {
			t.Fatalf("with a key from the same IP: %d %s", r.Status, r.Body)
		}
	})
}

// TestRateLimitTrustedProxy: behind a trusted proxy, the client is the
// address the proxy appended to X-Forwarded-For, each with its own allowance.
func TestRateLimitTrustedProxy(t *testing.T) {
	s := apptest.StartWith(t, store.SQLite, apptest.Options{TrustedProxies: "127.0.0.1/32, ::1"})
	from := func(xff string) resp {
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/v1/users/me", nil)
		req.Header.Set("X-Forwarded-For", xff)
		return do(t, req)
	}
	if got := from("198.51.100.7").Header.Get("X-RateLimit-Remaining"); got != "999" {
		t.Errorf("first client: remaining %s, want 999", got)
	}
	if got := from("198.51.100.8").Header.Get("X-RateLimit-Remaining"); got != "999" {
		t.Errorf("second client: remaining %s, want its own 999", got)
	}
	// A client cannot pose as another by sending the header itself: the
	// proxy appends the real address after the forged one.
	if got := from("198.51.100.8, 198.51.100.7").Header.Get("X-RateLimit-Remaining"); got != "998" {
		t.Errorf("forged hop: remaining %s, want the real client's 998", got)
	}
	// IPv6 clients are counted per /64.
	from("2001:db8:1:2::1")
	if got := from("2001:db8:1:2:ffff::9").Header.Get("X-RateLimit-Remaining"); got != "998" {
		t.Errorf("same /64: remaining %s, want 998", got)
	}
}

// TestRateLimitRedisOutage: the service keeps serving when Redis goes away
// (counting on local limits, headers and all), and counts in Redis again once
// it is back.
func TestRateLimitRedisOutage(t *testing.T) {
	for _, d := range testdb.Engines() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			proxy, via := redistest.NewProxy(t, redistest.URL(t))
			s := apptest.StartRedis(t, d, via)
			lim := s.App.Limiter.(*ratelimit.Redis)
			key := keyOf(t, s.App, s.User(t, "ann").ID, "read")
			for i := 0; i < 5; i++ {
				get(t, s, "/v1/users/me", key)
			}
			proxy.Stop()
			for i := 0; i < 20; i++ {
				r := get(t, s, "/v1/users/me", key)
				if r.Status != 200 || r.Header.Get("X-RateLimit-Limit") != "1000" {
					t.Fatalf("request %d with Redis down: %d %s", i, r.Status, r.Body)
				}
			}
			if lim.Up() {
				t.Fatal("limiter says Redis is up while it is stopped")
			}
			// On local limits the count started afresh: 20 spent.
			if got := get(t, s, "/v1/users/me", key).Header.Get("X-RateLimit-Remaining"); got != "979" {
				t.Errorf("on local limits: remaining %s, want 979", got)
			}
			proxy.Start(t)
			s.Clock.Advance(ratelimit.ProbeEvery)
			get(t, s, "/v1/users/me", key) // starts the probe
			for deadline := time.Now().Add(5 * time.Second); !lim.Up() && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if !lim.Up() {
				t.Fatal("still on local limits after Redis came back")
			}
			// Redis kept its count: 5 spent before the outage.
			if got := get(t, s, "/v1/users/me", key).Header.Get("X-RateLimit-Remaining"); got != "994" {
				t.Errorf("back on Redis: remaining %s, want 994", got)
			}
		})
	}
}
