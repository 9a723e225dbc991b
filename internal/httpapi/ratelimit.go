package httpapi

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/audit"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/clientip"
	"github.com/matchpoint-api/matchpoint/internal/ratelimit"
)

// Rate-limit policies, named in the RateLimit-Policy and RateLimit headers.
const (
	policyAccount   = "hourly"    // per paying account, its tier's hourly limit
	policyAnonymous = "anonymous" // per client IP, for requests without a valid credential
)

// DefaultAnonymousLimit is the hourly allowance of a client IP for requests
// without a valid credential: a Free account's.
const DefaultAnonymousLimit = 1000

// registerRateLimitMetrics adds the count of refused requests and, for a
// Redis limiter, whether Redis is in use (0: counting locally).
func registerRateLimitMetrics(reg prometheus.Registerer, l ratelimit.Limiter) *prometheus.CounterVec {
	limited := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "matchpoint_rate_limited_total", Help: "Requests refused with 429 by the rate limiter, by policy.",
	}, []string{"policy"})
	reg.MustRegister(limited)
	if r, ok := l.(interface{ Up() bool }); ok {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "matchpoint_rate_limit_redis_up", Help: "1 while rate limits are counted in Redis, 0 while this node counts alone because Redis is unreachable.",
		}, func() float64 {
			if r.Up() {
				return 1
			}
			return 0
		}))
	}
	return limited
}

// rateLimit counts every API request against an hourly allowance (GCRA:
// the whole hour may be spent at once, and it refills continuously): the
// paying account's (auth.Principal.AccountID, whose tier or custom limit is
// read with the credential on every request, so a change of tier applies at
// once), or, without a credential, the client IP's. Every response carries
// the allowance in headers; a request over it is answered 429 and goes no
// further.
func (s *server) rateLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := auth.FromContext(r.Context()); p != nil {
			s.limited(w, r, policyAccount, "acct:"+p.AccountID, p.HourlyLimit, func() { next.ServeHTTP(w, r) })
			return
		}
		s.limitAnonymous(w, r, func() { next.ServeHTTP(w, r) })
	})
}

// limitAnonymous counts a request without a valid credential against its
// client IP, then runs serve if it fits.
func (s *server) limitAnonymous(w http.ResponseWriter, r *http.Request, serve func()) {
	ip := audit.ClientIP(r.Context())
	if ip == "" {
		ip = "unknown"
	}
	key := "ip:" + clientip.Subscriber(ip)
	s.limited(w, r, policyAnonymous, key, s.anonymousLimit, serve)
}

func (s *server) limited(w http.ResponseWriter, r *http.Request, policy, key string, limit int64, serve func()) {
	d, err := s.limiter.Allow(r.Context(), key, limit)
	if err != nil {
		// The limiters fall back on their own; an error here is a bug, and
		// refusing service for it would make it an outage.
		Logger(r.Context()).ErrorContext(r.Context(), "rate limit", "error", err.Error())
		serve()
		return
	}
	h := w.Header()
	lim, remaining := strconv.FormatInt(d.Limit, 10), strconv.FormatInt(d.Remaining, 10)
	h["Ratelimit-Policy"] = []string{`"` + policy + `";q=` + lim + ";w=" + strconv.Itoa(int(ratelimit.Period/time.Second))}
	h["Ratelimit"] = []string{`"` + policy + `";r=` + remaining + ";t=" + strconv.FormatInt(seconds(d.NextAfter), 10)}
	h["X-Ratelimit-Limit"] = []string{lim}
	h["X-Ratelimit-Remaining"] = []string{remaining}
	h["X-Ratelimit-Reset"] = []string{strconv.FormatInt(d.ResetAt.Add(time.Second-time.Microsecond).Unix(), 10)}
	if d.Allowed {
		serve()
		return
	}
	s.rateLimited.WithLabelValues(policy).Inc()
	wait := max(seconds(d.RetryAfter), 1)
	h.Set("Retry-After", strconv.FormatInt(wait, 10))
	s.problems.writeErr(w, r, &apperr.Error{Kind: apperr.RateLimited, Code: "rate_limited",
		Message: fmt.Sprintf("Rate limit exceeded: %d requests per hour. Retry after %d seconds.", d.Limit, wait)})
}

// seconds rounds a wait up to whole seconds, as the headers count them.
func seconds(d time.Duration) int64 { return int64(math.Ceil(d.Seconds())) }
