package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/users"
)

var _ users.LoginThrottle = (*Users)(nil)

// LoginLockedUntil returns the end of the latest lock on any of keys, in
// one query: a sign-in checks several counters.
func (s *Users) LoginLockedUntil(ctx context.Context, keys ...string) (time.Time, error) {
	if len(keys) == 0 {
		return time.Time{}, nil
	}
	marks := make([]string, len(keys))
	args := make([]any, len(keys))
	for i, k := range keys {
		marks[i], args[i] = "$"+strconv.Itoa(i+1), k
	}
	var until int64
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(locked_until), 0) FROM login_attempts WHERE login_key IN (`+
		strings.Join(marks, ", ")+`)`, args...).Scan(&until)
	if err != nil {
		return time.Time{}, fmt.Errorf("store: read login attempts: %w", err)
	}
	if until == 0 {
		return time.Time{}, nil
	}
	return fromMicros(until), nil
}

// RecordLoginFailure counts a failed sign-in in one statement, so attempts
// racing on several nodes are all counted, and returns the key's lock.
func (s *Users) RecordLoginFailure(ctx context.Context, key string, now, windowStart time.Time, max int, lockUntil time.Time) (time.Time, error) {
	var until int64
	err := s.db.QueryRowContext(ctx, `INSERT INTO login_attempts (login_key, failures, window_start, locked_until) VALUES ($1, 1, $2, 0)
		ON CONFLICT (login_key) DO UPDATE SET
			failures = CASE WHEN login_attempts.window_start < $3 THEN 1 ELSE login_attempts.failures + 1 END,
			window_start = CASE WHEN login_attempts.window_start < $3 THEN $2 ELSE login_attempts.window_start END,
			locked_until = CASE WHEN login_attempts.window_start >= $3 AND login_attempts.failures + 1 >= $4 THEN $5
				ELSE login_attempts.locked_until END
		RETURNING locked_until`,
		key, micros(now), micros(windowStart), max, micros(lockUntil)).Scan(&until)
	if err != nil {
		return time.Time{}, fmt.Errorf("store: record login failure: %w", err)
	}
	if until == 0 {
		return time.Time{}, nil
	}
	return fromMicros(until), nil
}

// ResetLoginFailures forgets failures after a successful sign-in.
func (s *Users) ResetLoginFailures(ctx context.Context, key string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM login_attempts WHERE login_key = $1`, key); err != nil {
		return fmt.Errorf("store: reset login attempts: %w", err)
	}
	return nil
}
