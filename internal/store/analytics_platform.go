package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/analytics"
	"github.com/matchpoint-api/matchpoint/internal/matching"
)

// day is the SQL of the UTC day a microsecond column falls in.
func day(col string) string { return "((" + col + ") / 86400000000) * 86400000000" }

const dayMicros = int64(24 * time.Hour / time.Microsecond)

// platformQueries count, per day of [$1, $2), from the domains' own rows;
// each fills its figures of the day.
var platformQueries = []struct {
	name, query string
	fill        func(d *analytics.PlatformDay, n []int64)
}{
	{"signups", `SELECT ` + day("created_at") + `, COUNT(*) FROM users
		WHERE created_at >= $1 AND created_at < $2 AND role <> 'system' GROUP BY 1`,
		func(d *analytics.PlatformDay, n []int64) { d.Signups = n[0] }},
	{"active users", `SELECT day, COUNT(*) FROM analytics_active_users WHERE day >= $1 AND day < $2 GROUP BY day`,
		func(d *analytics.PlatformDay, n []int64) { d.ActiveUsers = n[0] }},
	{"match requests", `SELECT ` + day("created_at") + `, COUNT(*) FROM matches
		WHERE created_at >= $1 AND created_at < $2 GROUP BY 1`,
		func(d *analytics.PlatformDay, n []int64) { d.MatchRequests = n[0] }},
	{"matches closed", `SELECT ` + day("closed_at") + `, SUM(CASE WHEN status = 'accepted' THEN 1 ELSE 0 END), COUNT(*)
		FROM matches WHERE closed_at >= $1 AND closed_at < $2 AND status <> 'pending' GROUP BY 1`,
		func(d *analytics.PlatformDay, n []int64) { d.MatchesAccepted, d.MatchesClosed = n[0], n[1] }},
	{"messages", `SELECT ` + day("created_at") + `, COUNT(*) FROM messages
		WHERE created_at >= $1 AND created_at < $2 GROUP BY 1`,
		func(d *analytics.PlatformDay, n []int64) { d.MessagesSent = n[0] }},
	{"events created", `SELECT ` + day("created_at") + `, COUNT(*) FROM events
		WHERE created_at >= $1 AND created_at < $2 GROUP BY 1`,
		func(d *analytics.PlatformDay, n []int64) { d.EventsCreated = n[0] }},
	{"rsvps", `SELECT ` + day("created_at") + `, COUNT(*) FROM event_rsvps
		WHERE created_at >= $1 AND created_at < $2 GROUP BY 1`,
		func(d *analytics.PlatformDay, n []int64) { d.RSVPs = n[0] }},
	{"check-ins", `SELECT ` + day("created_at") + `, COUNT(*) FROM event_checkins
		WHERE created_at >= $1 AND created_at < $2 GROUP BY 1`,
		func(d *analytics.PlatformDay, n []int64) { d.CheckIns = n[0] }},
	// Attendance as reliability counts it: events where the organiser took
	// attendance (someone was checked in), people going, and those of them
	// who came.
	{"attendance", `SELECT ` + day("starts_at") + `, SUM(attended_going_count), SUM(going_count) FROM events
		WHERE starts_at >= $1 AND starts_at < $2 AND status = 'scheduled' AND attended_count > 0 GROUP BY 1`,
		func(d *analytics.PlatformDay, n []int64) { d.AttendedGoing, d.AttendanceGoing = n[0], n[1] }},
	{"webhook deliveries", `SELECT ` + day("created_at") + `, COUNT(*) FROM webhook_deliveries
		WHERE created_at >= $1 AND created_at < $2 AND test = FALSE GROUP BY 1`,
		func(d *analytics.PlatformDay, n []int64) { d.WebhookDeliveries = n[0] }},
	{"webhook outcomes", `SELECT ` + day("completed_at") + `, SUM(CASE WHEN status = 'succeeded' THEN 1 ELSE 0 END),
		SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END) FROM webhook_deliveries
		WHERE completed_at >= $1 AND completed_at < $2 AND test = FALSE GROUP BY 1`,
		func(d *analytics.PlatformDay, n []int64) { d.WebhookSucceeded, d.WebhookFailed = n[0], n[1] }},
}

// Platform reads the product metrics of the days in [from, to).
func (a *Analytics) Platform(ctx context.Context, from, to time.Time) ([]analytics.PlatformDay, error) {
	var days []analytics.PlatformDay
	index := map[int64]int{}
	for t := from; t.Before(to); t = t.Add(24 * time.Hour) {
		index[micros(t)] = len(days)
		days = append(days, analytics.PlatformDay{Start: t})
	}
	for _, q := range platformQueries {
		rows, err := a.db.QueryContext(ctx, q.query, micros(from), micros(to))
		if err != nil {
			return nil, fmt.Errorf("store: platform %s: %w", q.name, err)
		}
		for rows.Next() {
			var start int64
			vals := make([]sql.NullInt64, 0, 2)
			dest := []any{&start}
			for range cols(rows) - 1 {
				vals = append(vals, sql.NullInt64{})
			}
			for i := range vals {
				dest = append(dest, &vals[i])
			}
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: platform %s: %w", q.name, err)
			}
			n := make([]int64, len(vals))
			for i, v := range vals {
				n[i] = v.Int64
			}
			if i, ok := index[start]; ok {
				q.fill(&days[i], n)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("store: platform %s: %w", q.name, err)
		}
	}
	// Weekly and monthly active users: distinct people over the 7 and 30
	// days ending with each day.
	for i := range days {
		end := micros(days[i].Start) + dayMicros
		for _, w := range []struct {
			days int64
			into *int64
		}{{7, &days[i].WeeklyActive}, {30, &days[i].MonthlyActive}} {
			if err := a.db.QueryRowContext(ctx, `SELECT COUNT(DISTINCT user_id) FROM analytics_active_users
				WHERE day >= $1 AND day < $2`, end-w.days*dayMicros, end).Scan(w.into); err != nil {
				return nil, fmt.Errorf("store: platform active users: %w", err)
			}
		}
	}
	return days, nil
}

func cols(rows *sql.Rows) int {
	c, _ := rows.Columns()
	return len(c)
}

// MatchOutcomes lists the match requests closed in [from, to), with the
// distance between the two people's profile locations.
func (a *Analytics) MatchOutcomes(ctx context.Context, from, to time.Time) ([]analytics.MatchOutcome, error) {
	rows, err := a.db.QueryContext(ctx, `SELECT m.sport, m.status, u1.latitude, u1.longitude, u2.latitude, u2.longitude
		FROM matches m JOIN users u1 ON u1.id = m.user1_id JOIN users u2 ON u2.id = m.user2_id
		WHERE m.closed_at >= $1 AND m.closed_at < $2 AND m.status <> 'pending'`, micros(from), micros(to))
	if err != nil {
		return nil, fmt.Errorf("store: match outcomes: %w", err)
	}
	defer rows.Close()
	var out []analytics.MatchOutcome
	for rows.Next() {
		var o analytics.MatchOutcome
		var status string
		var lat1, lon1, lat2, lon2 sql.NullFloat64
		if err := rows.Scan(&o.Sport, &status, &lat1, &lon1, &lat2, &lon2); err != nil {
			return nil, fmt.Errorf("store: match outcomes: %w", err)
		}
		o.Accepted = status == matching.StatusAccepted
		if lat1.Valid && lon1.Valid && lat2.Valid && lon2.Valid {
			d := matching.DistanceKM(lat1.Float64, lon1.Float64, lat2.Float64, lon2.Float64)
			o.DistanceKM = &d
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// Activity sums one user's own activity.
func (a *Analytics) Activity(ctx context.Context, userID string, _ time.Time) (*analytics.Activity, error) {
	var act analytics.Activity
	err := a.db.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM matches WHERE user1_id = $1),
		(SELECT COUNT(*) FROM matches WHERE user2_id = $1),
		(SELECT COUNT(*) FROM matches WHERE (user1_id = $1 OR user2_id = $1) AND status = 'accepted'),
		(SELECT COUNT(*) FROM messages WHERE sender_id = $1),
		(SELECT COUNT(*) FROM events WHERE creator_id = $1),
		(SELECT COUNT(*) FROM event_checkins WHERE user_id = $1)`, userID).
		Scan(&act.MatchRequestsSent, &act.MatchRequestsReceived, &act.Matches, &act.MessagesSent, &act.EventsCreated, &act.EventsAttended)
	if err != nil {
		return nil, fmt.Errorf("store: activity: %w", err)
	}
	return &act, nil
}
