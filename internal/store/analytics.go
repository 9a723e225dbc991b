package store

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/analytics"
)

// Analytics is the store of request analytics and product metrics.
type Analytics struct{ db *DB }

// NewAnalytics returns the analytics store over db.
func NewAnalytics(db *DB) *Analytics { return &Analytics{db: db} }

var _ analytics.Store = (*Analytics)(nil)

func init() {
	// Usage billed to an erased account, and the days it was active, go
	// with it.
	deleteRowsOf("analytics_usage", "user_id")
	deleteRowsOf("analytics_latency", "user_id")
	deleteRowsOf("analytics_active_users", "user_id")
}

// AddUsage adds a flush's counts to the rollups: an upsert that adds, so
// that any number of nodes flush into the same rows. Rows arrive in one
// order on every node, so concurrent flushes take row locks in that order.
func (a *Analytics) AddUsage(ctx context.Context, rows []analytics.Row, active []analytics.Active) error {
	return a.db.Tx(ctx, func(tx *sql.Tx) error {
		usage, err := tx.PrepareContext(ctx, `INSERT INTO analytics_usage
			(granularity, bucket_start, user_id, credential, operation, requests, errors_4xx, errors_5xx)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (granularity, user_id, bucket_start, credential, operation) DO UPDATE SET
			requests = analytics_usage.requests + excluded.requests,
			errors_4xx = analytics_usage.errors_4xx + excluded.errors_4xx,
			errors_5xx = analytics_usage.errors_5xx + excluded.errors_5xx`)
		if err != nil {
			return fmt.Errorf("store: prepare usage: %w", err)
		}
		defer usage.Close()
		latency, err := tx.PrepareContext(ctx, `INSERT INTO analytics_latency
			(granularity, bucket_start, user_id, credential, operation, bin, n)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (granularity, user_id, bucket_start, credential, operation, bin) DO UPDATE SET
			n = analytics_latency.n + excluded.n`)
		if err != nil {
			return fmt.Errorf("store: prepare latency: %w", err)
		}
		defer latency.Close()
		for _, r := range rows {
			start := micros(r.Start)
			if _, err := usage.ExecContext(ctx, r.Granularity, start, r.AccountID, r.Credential, r.Operation,
				r.Requests, r.Errors4xx, r.Errors5xx); err != nil {
				return fmt.Errorf("store: add usage: %w", err)
			}
			for _, bin := range sortedBins(r.Latency) {
				if _, err := latency.ExecContext(ctx, r.Granularity, start, r.AccountID, r.Credential, r.Operation,
					bin, r.Latency[bin]); err != nil {
					return fmt.Errorf("store: add latency: %w", err)
				}
			}
		}
		for _, u := range active {
			if _, err := tx.ExecContext(ctx, `INSERT INTO analytics_active_users (day, user_id) VALUES ($1, $2)
				ON CONFLICT (day, user_id) DO NOTHING`, micros(u.Day), u.UserID); err != nil {
				return fmt.Errorf("store: add active user: %w", err)
			}
		}
		return nil
	})
}

func sortedBins(s analytics.Sketch) []int32 { return slices.Sorted(maps.Keys(s)) }

// groupColumn is the column a usage report groups by.
func groupColumn(groupBy string) string {
	switch groupBy {
	case analytics.ByOperation:
		return "operation"
	case analytics.ByCredential:
		return "credential"
	}
	return "''"
}

type usageKey struct {
	start int64
	group string
}

// Usage sums an account's rollups per bucket and group, with the summed
// latency bins of each.
func (a *Analytics) Usage(ctx context.Context, account, granularity string, from, to time.Time, groupBy string) ([]analytics.UsageRow, error) {
	g := groupColumn(groupBy)
	// PostgreSQL refuses a constant in GROUP BY: group by the bucket alone.
	groupBy = ", " + g
	if g == "''" {
		groupBy = ""
	}
	rows, err := a.db.QueryContext(ctx, `SELECT bucket_start, `+g+`, SUM(requests), SUM(errors_4xx), SUM(errors_5xx)
		FROM analytics_usage WHERE granularity = $1 AND user_id = $2 AND bucket_start >= $3 AND bucket_start < $4
		GROUP BY bucket_start`+groupBy+` ORDER BY bucket_start`+groupBy,
		granularity, account, micros(from), micros(to))
	if err != nil {
		return nil, fmt.Errorf("store: usage: %w", err)
	}
	var out []analytics.UsageRow
	index := map[usageKey]int{}
	for rows.Next() {
		var r analytics.UsageRow
		var start int64
		if err := rows.Scan(&start, &r.Group, &r.Requests, &r.Errors4xx, &r.Errors5xx); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: usage: %w", err)
		}
		r.Start, r.Latency = fromMicros(start), analytics.Sketch{}
		index[usageKey{start, r.Group}] = len(out)
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: usage: %w", err)
	}
	bins, err := a.db.QueryContext(ctx, `SELECT bucket_start, `+g+`, bin, SUM(n)
		FROM analytics_latency WHERE granularity = $1 AND user_id = $2 AND bucket_start >= $3 AND bucket_start < $4
		GROUP BY bucket_start`+groupBy+`, bin`,
		granularity, account, micros(from), micros(to))
	if err != nil {
		return nil, fmt.Errorf("store: usage latency: %w", err)
	}
	defer bins.Close()
	for bins.Next() {
		var start, n int64
		var group string
		var bin int32
		if err := bins.Scan(&start, &group, &bin, &n); err != nil {
			return nil, fmt.Errorf("store: usage latency: %w", err)
		}
		if i, ok := index[usageKey{start, group}]; ok {
			out[i].Latency.Add(bin, n)
		}
	}
	return out, bins.Err()
}

// PurgeUsage deletes the rollups of a granularity older than before.
func (a *Analytics) PurgeUsage(ctx context.Context, granularity string, before time.Time) (int64, error) {
	var total int64
	for _, table := range []string{"analytics_usage", "analytics_latency"} {
		res, err := a.db.ExecContext(ctx, `DELETE FROM `+table+` WHERE granularity = $1 AND bucket_start < $2`,
			granularity, micros(before))
		if err != nil {
			return total, fmt.Errorf("store: purge %s: %w", table, err)
		}
		n, _ := res.RowsAffected()
		total += n
	}
	if granularity == "d" {
		// Active days serve the monthly count: kept as long as daily rollups.
		res, err := a.db.ExecContext(ctx, `DELETE FROM analytics_active_users WHERE day < $1`, micros(before))
		if err != nil {
			return total, fmt.Errorf("store: purge active users: %w", err)
		}
		n, _ := res.RowsAffected()
		total += n
	}
	return total, nil
}
