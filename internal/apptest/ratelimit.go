package apptest

import (
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/ratelimit"
	"github.com/matchpoint-api/matchpoint/internal/ratelimit/redistest"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
)

// EachLimiter runs fn once per database engine and rate-limit store: counted
// in process, and in the tests' Redis (skipped when there is none; see
// redistest.URL) under a key prefix of the test's own.
func EachLimiter(t *testing.T, fn func(t *testing.T, s *Server)) {
	t.Helper()
	for _, d := range testdb.Engines() {
		t.Run(string(d)+"/local", func(t *testing.T) {
			t.Parallel()
			fn(t, Start(t, d))
		})
		t.Run(string(d)+"/redis", func(t *testing.T) {
			t.Parallel()
			s := StartRedis(t, d, redistest.URL(t))
			fn(t, s)
			if !s.App.Limiter.(*ratelimit.Redis).Up() {
				t.Error("the rate limiter fell back to counting in process: Redis was not what the test measured")
			}
		})
	}
}

// StartRedis runs the service with its rate limits counted in the Redis at
// redisURL, under a key prefix deleted when the test ends.
func StartRedis(t testing.TB, d store.Dialect, redisURL string) *Server {
	t.Helper()
	prefix := redistest.Prefix(t, redisURL)
	return StartWith(t, d, Options{Configure: func(c *config.Config, o *app.Options) {
		c.RedisURL, o.RateLimitPrefix = redisURL, prefix
	}})
}
