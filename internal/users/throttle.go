package users

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
)

// Sign-in throttling: after MaxLoginFailures failed attempts within
// LoginWindow, the login name is refused for LoginLockout. It slows password
// guessing to a few dozen tries an hour per account, whichever node serves
// the attempts.
const (
	MaxLoginFailures = 10
	LoginWindow      = 15 * time.Minute
	LoginLockout     = 15 * time.Minute
)

// LoginThrottle is the persistence throttling needs.
type LoginThrottle interface {
	// LoginLockedUntil returns when the lock on key ends (zero if none).
	LoginLockedUntil(ctx context.Context, key string) (time.Time, error)
	// RecordLoginFailure counts a failure, starting a new window if the last
	// one ended, and locks key until lockUntil once max is reached.
	RecordLoginFailure(ctx context.Context, key string, now, windowStart time.Time, max int, lockUntil time.Time) error
	ResetLoginFailures(ctx context.Context, key string) error
}

func loginKey(login string) string { return strings.ToLower(strings.TrimSpace(login)) }

func (s *Service) checkThrottle(ctx context.Context, key string) error {
	until, err := s.throttle.LoginLockedUntil(ctx, key)
	if err != nil {
		return err
	}
	if wait := until.Sub(s.clock.Now()); wait > 0 {
		return &apperr.Error{Kind: apperr.RateLimited, Code: "too_many_attempts",
			Message: fmt.Sprintf("Too many failed sign-ins. Try again in %d minutes.", int(math.Ceil(wait.Minutes())))}
	}
	return nil
}

func (s *Service) recordFailure(ctx context.Context, key string) error {
	now := s.clock.Now()
	return s.throttle.RecordLoginFailure(ctx, key, now, now.Add(-LoginWindow), MaxLoginFailures, now.Add(LoginLockout))
}
