package store

import (
	"context"
	"fmt"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/events"
)

// Reliability counts the events a user was going to over the window whose
// attendance is final and was taken (at least one check-in), and how many
// of them they attended.
func (s *Events) Reliability(ctx context.Context, userID string, now time.Time) (*events.Reliability, error) {
	var r events.Reliability
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*), COUNT(c.user_id) FROM event_rsvps r
		JOIN events e ON e.id = r.event_id
		LEFT JOIN event_checkins c ON c.event_id = r.event_id AND c.user_id = r.user_id
		WHERE r.user_id = $1 AND r.status = 'going' AND e.status = 'scheduled' AND e.attended_count > 0
		AND e.ends_at < $2 AND e.ends_at >= $3`,
		userID, micros(now.Add(-events.CheckInGrace)), micros(now.Add(-events.ReliabilityWindow))).Scan(&r.Events, &r.Attended)
	if err != nil {
		return nil, fmt.Errorf("store: reliability: %w", err)
	}
	if r.Events > 0 {
		sc := float64(r.Attended) / float64(r.Events)
		r.Score = &sc
	}
	return &r, nil
}

// DueReminders lists events whose next reminder is due at now: the 24-hour
// one (stage 0 -> 1) or the 1-hour one (stage < 2).
func (s *Events) DueReminders(ctx context.Context, now time.Time, limit int) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM events e WHERE status = 'scheduled' AND reminder_stage < 2
		AND starts_at > $1 AND ((reminder_stage = 0 AND starts_at <= $2) OR starts_at <= $3)
		ORDER BY starts_at LIMIT $4`,
		micros(now), micros(now.Add(24*time.Hour)), micros(now.Add(time.Hour)), limit)
	if err != nil {
		return nil, fmt.Errorf("store: due reminders: %w", err)
	}
	return scanStrings(rows)
}
