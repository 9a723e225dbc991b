package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/idempotency"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// Retention after expiry. Expired codes and access tokens are kept a day so
// that a late replay still gets "expired" or "already used" (and reuse
// detection) instead of "unknown"; used refresh tokens are kept until they
// expire, because presenting one again must revoke its family.
const keepAfterExpiry = 24 * time.Hour

// Retention says how long finished records are kept.
type Retention struct {
	Idempotency time.Duration // idempotency keys (24 h)
	Outbox      time.Duration // events every consumer is done with (30 days)
	Stream      time.Duration // real-time stream events, replayable until then (7 days)
}

// DefaultRetention is the retention of DECISIONS.md.
var DefaultRetention = Retention{Idempotency: idempotency.TTL, Outbox: 30 * 24 * time.Hour, Stream: 7 * 24 * time.Hour}

// PurgeExpired deletes rows nothing can use any more and returns how many of
// each. Every node may run it at any time: the deletes are idempotent.
func (db *DB) PurgeExpired(ctx context.Context, now time.Time, keep Retention) (map[string]int64, error) {
	if keep.Stream <= 0 {
		keep.Stream = DefaultRetention.Stream // a zero would purge every stream event at once
	}
	// The stream's expired rows are the oldest: those before the first row
	// that is not, in sequence order (read from the start, which the
	// delete reads anyway), or all of them when none is left. A row whose
	// clock ran behind a later one's waits for the next run. The bound is
	// found first so that the delete is planned with its value; the delete
	// tests the time again, for a row below the bound that committed in
	// between (PostgreSQL numbers rows before their transactions commit).
	streamCutoff := micros(now.Add(-keep.Stream))
	var streamBound sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(
		(SELECT seq FROM stream_events WHERE created_at >= $1 ORDER BY seq LIMIT 1),
		(SELECT MAX(seq) + 1 FROM stream_events))`, streamCutoff).Scan(&streamBound); err != nil {
		return nil, fmt.Errorf("store: purge stream_events: %w", err)
	}
	jobs := []struct {
		table, query string
		args         []any
	}{
		{"web_sessions", `DELETE FROM web_sessions WHERE expires_at < $1`, []any{micros(now)}},
		{"idempotency_keys", `DELETE FROM idempotency_keys WHERE created_at < $1`, []any{micros(now.Add(-keep.Idempotency))}},
		// An event still pending for some consumer is kept, however old.
		{"outbox_events", `DELETE FROM outbox_events WHERE created_at < $1
			AND NOT EXISTS (SELECT 1 FROM outbox_pending p WHERE p.seq = outbox_events.seq)`, []any{micros(now.Add(-keep.Outbox))}},
		{"oauth_codes", `DELETE FROM oauth_codes WHERE expires_at < $1`, []any{micros(now.Add(-keepAfterExpiry))}},
		{"oauth_access_tokens", `DELETE FROM oauth_access_tokens WHERE expires_at < $1`, []any{micros(now.Add(-keepAfterExpiry))}},
		{"oauth_refresh_tokens", `DELETE FROM oauth_refresh_tokens WHERE expires_at < $1`, []any{micros(now)}},
		// A client away longer than this reconnects without replay.
		{"stream_events", `DELETE FROM stream_events WHERE seq < $1 AND created_at < $2`, []any{streamBound.Int64, streamCutoff}}, // NULL (no rows): 0, nothing
		{"login_attempts", `DELETE FROM login_attempts WHERE window_start < $1 AND locked_until < $1`, []any{micros(now.Add(-users.LoginWindow))}},
	}
	out := map[string]int64{}
	for _, j := range jobs {
		res, err := db.ExecContext(ctx, j.query, j.args...)
		if err != nil {
			return out, fmt.Errorf("store: purge %s: %w", j.table, err)
		}
		out[j.table], _ = res.RowsAffected()
	}
	return out, nil
}
