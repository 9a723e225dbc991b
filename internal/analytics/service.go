// Package analytics counts the API's requests per account, credential and
// operation (in memory, flushed to the database in batches by every node),
// and reads product metrics for operators from the domains' own records:
// sign-ups, active users, matches, messages, events, RSVPs, check-ins and
// webhook deliveries.
package analytics

import (
	"context"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/clock"
)

// Granularities of the rollups.
const (
	Hour = "hour"
	Day  = "day"
)

// Groupings of the usage report.
const (
	ByNone       = ""
	ByOperation  = "operation"
	ByCredential = "credential"
)

// Range limits: the hourly rollups of a month, the daily ones of a year.
const (
	MaxHours = 31 * 24
	MaxDays  = 366
)

// UsageRow is what the store sums for one bucket and group.
type UsageRow struct {
	Start                          time.Time
	Group                          string
	Requests, Errors4xx, Errors5xx int64
	Latency                        Sketch
}

// Store is what analytics reads and writes.
type Store interface {
	Sink
	// Usage sums an account's rollups of one granularity ("h" or "d") in
	// [from, to), per bucket and group (the operation, the credential, or
	// "" for all).
	Usage(ctx context.Context, account, granularity string, from, to time.Time, groupBy string) ([]UsageRow, error)
	// Platform reads the product metrics of the days in [from, to).
	Platform(ctx context.Context, from, to time.Time) ([]PlatformDay, error)
	// MatchOutcomes lists the match requests closed in [from, to).
	MatchOutcomes(ctx context.Context, from, to time.Time) ([]MatchOutcome, error)
	// Activity sums one user's own activity.
	Activity(ctx context.Context, userID string, now time.Time) (*Activity, error)
	// WebhookAttempts counts an endpoint's attempts in [from, to) per hour
	// and latency class (AttemptBounds).
	WebhookAttempts(ctx context.Context, subscriptionID string, from, to time.Time) ([]AttemptClass, error)
	// PurgeUsage deletes rollups of a granularity older than before.
	PurgeUsage(ctx context.Context, granularity string, before time.Time) (int64, error)
}

// Service answers the analytics operations.
type Service struct {
	store Store
	clock clock.Clock
}

// NewService returns the analytics service over a store.
func NewService(st Store, clk clock.Clock) *Service { return &Service{store: st, clock: clk} }

// Range is a validated time range and bucket size.
type Range struct {
	From, To    time.Time
	Granularity string
}

// step is the length of one bucket.
func (r Range) step() time.Duration {
	if r.Granularity == Hour {
		return time.Hour
	}
	return 24 * time.Hour
}

// ParseRange reads from, to and granularity. Empty from and to mean the
// last 24 hours (hourly) or 30 days (daily), ending with the current bucket;
// both are rounded down to the bucket size, to is exclusive.
func (s *Service) ParseRange(from, to, granularity, defaultGranularity string) (Range, error) {
	if granularity == "" {
		granularity = defaultGranularity
	}
	if granularity != Hour && granularity != Day {
		return Range{}, apperr.InvalidParam("granularity", "invalid_granularity", "granularity is hour or day")
	}
	r := Range{Granularity: granularity}
	step := r.step()
	var err error
	if to == "" {
		r.To = s.clock.Now().UTC().Truncate(step).Add(step)
	} else if r.To, err = time.Parse(time.RFC3339, to); err != nil {
		return Range{}, apperr.InvalidParam("to", "invalid_time", "to must be an RFC 3339 time, like 2026-01-31T00:00:00Z")
	}
	r.To = r.To.UTC()
	if r.To.Truncate(step) != r.To {
		r.To = r.To.Truncate(step).Add(step)
	}
	n := 24
	if granularity == Day {
		n = 30
	}
	if from == "" {
		r.From = r.To.Add(-time.Duration(n) * step)
	} else if r.From, err = time.Parse(time.RFC3339, from); err != nil {
		return Range{}, apperr.InvalidParam("from", "invalid_time", "from must be an RFC 3339 time, like 2026-01-01T00:00:00Z")
	}
	r.From = r.From.UTC().Truncate(step)
	if !r.From.Before(r.To) {
		return Range{}, apperr.InvalidParam("from", "invalid_range", "from must be before to")
	}
	limit := MaxHours
	if granularity == Day {
		limit = MaxDays
	}
	if r.To.Sub(r.From) > time.Duration(limit)*step {
		return Range{}, apperr.InvalidParam("from", "range_too_long", "a report covers at most %d %ss", limit, granularity)
	}
	return r, nil
}

// UsageBucket is one line of the usage report.
type UsageBucket struct {
	Start, End                     time.Time
	Group                          string
	Requests, Errors4xx, Errors5xx int64
	P50, P95, P99                  float64 // milliseconds
}

// Usage reports an account's requests in r, per bucket and group. Only
// buckets with requests appear.
func (s *Service) Usage(ctx context.Context, account string, r Range, groupBy string) ([]UsageBucket, error) {
	if groupBy != ByNone && groupBy != ByOperation && groupBy != ByCredential {
		return nil, apperr.InvalidParam("group_by", "invalid_group_by", "group_by is operation or credential")
	}
	gran := "h"
	if r.Granularity == Day {
		gran = "d"
	}
	rows, err := s.store.Usage(ctx, account, gran, r.From, r.To, groupBy)
	if err != nil {
		return nil, err
	}
	out := make([]UsageBucket, 0, len(rows))
	for _, row := range rows {
		out = append(out, UsageBucket{Start: row.Start, End: row.Start.Add(r.step()), Group: row.Group,
			Requests: row.Requests, Errors4xx: row.Errors4xx, Errors5xx: row.Errors5xx,
			P50: row.Latency.Quantile(0.50), P95: row.Latency.Quantile(0.95), P99: row.Latency.Quantile(0.99)})
	}
	return out, nil
}

// Retention is how long each rollup is kept.
type Retention struct{ Hourly, Daily time.Duration }

// Purge deletes the rollups past their retention.
func (s *Service) Purge(ctx context.Context, keep Retention) (int64, error) {
	now := s.clock.Now()
	a, err := s.store.PurgeUsage(ctx, "h", now.Add(-keep.Hourly))
	if err != nil {
		return a, err
	}
	b, err := s.store.PurgeUsage(ctx, "d", now.Add(-keep.Daily))
	return a + b, err
}
