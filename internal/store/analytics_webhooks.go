package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/analytics"
)

// attemptClassSQL maps an attempt's duration to its latency class.
var attemptClassSQL = func() string {
	var b strings.Builder
	b.WriteString("CASE")
	for i, ms := range analytics.AttemptBounds {
		fmt.Fprintf(&b, " WHEN duration_us <= %d THEN %d", int64(ms*1000), i)
	}
	b.WriteString(" ELSE " + strconv.Itoa(len(analytics.AttemptBounds)) + " END")
	return b.String()
}()

// WebhookAttempts counts an endpoint's attempts per hour and latency class:
// the database sums them, so a busy endpoint's chart reads a few dozen rows.
func (a *Analytics) WebhookAttempts(ctx context.Context, subscriptionID string, from, to time.Time) ([]analytics.AttemptClass, error) {
	rows, err := a.db.QueryContext(ctx, `SELECT (started_at / 3600000000) * 3600000000, `+attemptClassSQL+`,
		COUNT(*), SUM(CASE WHEN ok THEN 1 ELSE 0 END)
		FROM webhook_attempts WHERE subscription_id = $1 AND started_at >= $2 AND started_at < $3
		GROUP BY 1, 2`, subscriptionID, micros(from), micros(to))
	if err != nil {
		return nil, fmt.Errorf("store: webhook attempts: %w", err)
	}
	defer rows.Close()
	var out []analytics.AttemptClass
	for rows.Next() {
		var c analytics.AttemptClass
		var start int64
		if err := rows.Scan(&start, &c.Class, &c.Attempts, &c.Succeeded); err != nil {
			return nil, fmt.Errorf("store: webhook attempts: %w", err)
		}
		c.Start = fromMicros(start)
		out = append(out, c)
	}
	return out, rows.Err()
}
