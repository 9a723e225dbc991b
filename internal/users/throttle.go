package users

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/audit"
	"github.com/matchpoint-api/matchpoint/internal/clientip"
)

// Sign-in throttling (DECISIONS.md, Accounts): failures are counted per
// account and client IP together, per client IP, and per account, each in a
// window of LoginWindow. An attacker guessing from one address is stopped by
// the first two limits while the owner, elsewhere, still signs in; only a
// guesser spread over many addresses reaches the account's own limit, which
// keeps guessing under ASVS 2.2.1's hundred tries an hour.
const (
	MaxLoginFailures = 10 // per account and client IP
	LoginWindow      = 15 * time.Minute
	LoginLockout     = 15 * time.Minute
)

// limit is one throttling rule. Every window is LoginWindow: the janitor
// forgets counters older than that.
type limit struct {
	prefix  string
	max     int
	lockout time.Duration
}

var (
	perAccountIP = limit{"acct-ip", MaxLoginFailures, LoginLockout}
	perIP        = limit{"ip", 50, LoginLockout}
	perAccount   = limit{"acct", 100, time.Hour}
	signupPerIP  = limit{"signup-ip", 10, LoginLockout}
)

// LoginThrottle is the persistence throttling needs.
type LoginThrottle interface {
	// LoginLockedUntil returns when the latest lock on any of keys ends
	// (zero if none).
	LoginLockedUntil(ctx context.Context, keys ...string) (time.Time, error)
	// RecordLoginFailure counts a failure, starting a new window if the last
	// one ended, and locks key until lockUntil once max is reached. It
	// returns the end of the key's lock (zero if none).
	RecordLoginFailure(ctx context.Context, key string, now, windowStart time.Time, max int, lockUntil time.Time) (time.Time, error)
	ResetLoginFailures(ctx context.Context, key string) error
}

type counter struct {
	key string
	limit
}

// loginCounters are the counters a sign-in attempt on subject (an account,
// or an unknown login name) from ip is checked against. Without an IP (a
// direct call, not a request) only the account's are.
func loginCounters(subject, ip string) []counter {
	ip = clientip.Subscriber(ip)
	cs := []counter{{perAccountIP.prefix + ":" + subject + "|" + ip, perAccountIP}, {perAccount.prefix + ":" + subject, perAccount}}
	if ip != "" {
		cs = append(cs, counter{perIP.prefix + ":" + ip, perIP})
	}
	return cs
}

// Throttled is a refused attempt and how long to wait before the next.
type Throttled struct {
	Err        *apperr.Error
	RetryAfter time.Duration
}

func (t *Throttled) Error() string { return t.Err.Error() }
func (t *Throttled) Unwrap() error { return t.Err }

// RetryAfter returns how long a throttled caller is to wait.
func RetryAfter(err error) (time.Duration, bool) {
	var t *Throttled
	if errors.As(err, &t) {
		return t.RetryAfter, true
	}
	return 0, false
}

func throttled(wait time.Duration, what string) error {
	return &Throttled{RetryAfter: wait, Err: &apperr.Error{Kind: apperr.RateLimited, Code: "too_many_attempts",
		Message: fmt.Sprintf("Too many %s. Try again in %d minutes.", what, int(math.Ceil(wait.Minutes())))}}
}

// lockedFor returns how long the counters are still locked (0: not at all).
func (s *Service) lockedFor(ctx context.Context, cs []counter) (time.Duration, error) {
	keys := make([]string, len(cs))
	for i, c := range cs {
		keys[i] = c.key
	}
	until, err := s.throttle.LoginLockedUntil(ctx, keys...)
	if err != nil {
		return 0, err
	}
	return max(until.Sub(s.clock.Now()), 0), nil
}

// record counts a failure on every counter and logs the locks it sets.
func (s *Service) record(ctx context.Context, cs []counter, attrs ...slog.Attr) error {
	now := s.clock.Now()
	for _, c := range cs {
		until, err := s.throttle.RecordLoginFailure(ctx, c.key, now, now.Add(-LoginWindow), c.max, now.Add(c.lockout))
		if err != nil {
			return err
		}
		if until.After(now) && until.Equal(now.Add(c.lockout)) {
			audit.Event(ctx, slog.LevelWarn, audit.LoginLocked, append([]slog.Attr{slog.String("limit", c.prefix),
				slog.Int("max_failures", c.max), slog.Time("locked_until", until)}, attrs...)...)
		}
	}
	return nil
}

// throttleSignup refuses a sign-up from an address that made too many, and
// counts this one.
func (s *Service) throttleSignup(ctx context.Context) error {
	ip := audit.ClientIP(ctx)
	if ip == "" {
		return nil
	}
	cs := []counter{{signupPerIP.prefix + ":" + clientip.Subscriber(ip), signupPerIP}}
	wait, err := s.lockedFor(ctx, cs)
	if err != nil {
		return err
	}
	if wait > 0 {
		audit.Event(ctx, slog.LevelWarn, audit.SignupThrottled)
		return throttled(wait, "sign-ups from your network")
	}
	return s.record(ctx, cs)
}
