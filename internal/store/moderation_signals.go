package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/moderation"
)

// signalQueries count each behaviour signal per user since $1 (the window's
// start); $2 is the creation time from which an account is new. Each runs
// over indexed recent rows, in the background, never in a request.
var signalQueries = []struct {
	name, query string
	new         bool // takes $2
}{
	{moderation.SignalReportsAgainst, `SELECT r.subject_id, COUNT(DISTINCT r.reporter_id) FROM moderation_reports r
		JOIN users u ON u.id = r.subject_id WHERE r.created_at >= $1 AND u.deleted_at IS NULL GROUP BY r.subject_id`, false},
	{moderation.SignalBlocksAgainst, `SELECT b.blocked_id, COUNT(*) FROM user_blocks b
		JOIN users u ON u.id = b.blocked_id WHERE b.created_at >= $1 AND u.deleted_at IS NULL GROUP BY b.blocked_id`, false},
	// Links in a new account's first texts: its events and its profile.
	{moderation.SignalNewAccountLinks, `SELECT e.creator_id, COUNT(*) FROM events e JOIN users u ON u.id = e.creator_id
		WHERE e.created_at >= $1 AND u.created_at >= $2 AND u.deleted_at IS NULL
		AND (LOWER(e.title) LIKE '%http%' OR LOWER(e.title) LIKE '%www.%' OR LOWER(e.description) LIKE '%http%' OR LOWER(e.description) LIKE '%www.%')
		GROUP BY e.creator_id`, true},
	{moderation.SignalNewAccountLinks, `SELECT u.id, 1 FROM users u WHERE u.created_at >= $2 AND u.updated_at >= $1 AND u.deleted_at IS NULL
		AND (LOWER(u.bio) LIKE '%http%' OR LOWER(u.bio) LIKE '%www.%')`, true},
	// ... and its messages.
	{moderation.SignalNewAccountLinks, `SELECT m.sender_id, COUNT(*) FROM messages m JOIN users u ON u.id = m.sender_id
		WHERE m.created_at >= $1 AND u.created_at >= $2 AND u.deleted_at IS NULL AND m.deleted_at IS NULL
		AND (LOWER(m.body) LIKE '%http%' OR LOWER(m.body) LIKE '%www.%') GROUP BY m.sender_id`, true},
	// People messaged in direct conversations opened within the window with
	// someone they have no accepted match with.
	{moderation.SignalFanout, `SELECT m.sender_id, COUNT(DISTINCT o.user_id) FROM messages m
		JOIN conversations c ON c.id = m.conversation_id
		JOIN conversation_members o ON o.conversation_id = c.id AND o.user_id <> m.sender_id
		JOIN users u ON u.id = m.sender_id
		WHERE m.created_at >= $1 AND c.kind = 'direct' AND c.created_at >= $1 AND u.deleted_at IS NULL
		AND NOT EXISTS (SELECT 1 FROM matches x WHERE x.status = 'accepted'
			AND ((x.user1_id = m.sender_id AND x.user2_id = o.user_id) OR (x.user1_id = o.user_id AND x.user2_id = m.sender_id)))
		GROUP BY m.sender_id HAVING COUNT(DISTINCT o.user_id) >= 2`, false},
	// One same text (of some length: "ok" and "thanks" are everyone's) sent
	// to many conversations.
	{moderation.SignalSameText, `SELECT t.sender_id, MAX(t.n) FROM (SELECT m.sender_id, COUNT(DISTINCT m.conversation_id) AS n
		FROM messages m JOIN users u ON u.id = m.sender_id
		WHERE m.created_at >= $1 AND m.deleted_at IS NULL AND u.deleted_at IS NULL AND LENGTH(m.body) >= 20
		GROUP BY m.sender_id, m.body HAVING COUNT(DISTINCT m.conversation_id) >= 2) t GROUP BY t.sender_id`, false},
}

// Signals counts every signal since since for the users who have any.
func (s *Moderation) Signals(ctx context.Context, since, newAccountSince time.Time) ([]*moderation.Signals, error) {
	byUser := map[string]*moderation.Signals{}
	for _, q := range signalQueries {
		args := []any{micros(since)}
		if q.new {
			args = append(args, micros(newAccountSince))
		}
		rows, err := s.db.QueryContext(ctx, q.query, args...)
		if err != nil {
			return nil, fmt.Errorf("store: signal %s: %w", q.name, err)
		}
		for rows.Next() {
			var user string
			var n int
			if err := rows.Scan(&user, &n); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: signal %s: %w", q.name, err)
			}
			sg := byUser[user]
			if sg == nil {
				sg = &moderation.Signals{UserID: user, Counts: map[string]int{}}
				byUser[user] = sg
			}
			sg.Counts[q.name] += n
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("store: signal %s: %w", q.name, err)
		}
	}
	out := make([]*moderation.Signals, 0, len(byUser))
	for _, sg := range byUser {
		out = append(out, sg)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UserID < out[j].UserID })
	return out, nil
}

// SaveRisk replaces every user's risk with this pass's: a user whose signals
// left the window is back to none.
func (s *Moderation) SaveRisk(ctx context.Context, sgs []*moderation.Signals, at time.Time) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		// Nodes replace the whole table one after the other (SQLite's
		// write lock does the same).
		if s.db.Dialect == Postgres {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(6060)`); err != nil {
				return fmt.Errorf("store: save risk: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM moderation_risk`); err != nil {
			return fmt.Errorf("store: save risk: %w", err)
		}
		for _, sg := range sgs {
			if _, err := tx.ExecContext(ctx, `INSERT INTO moderation_risk (user_id, risk_score, signals, updated_at) VALUES ($1, $2, $3, $4)`,
				sg.UserID, sg.RiskScore, jsonText(sg.Counts), micros(at)); err != nil {
				return fmt.Errorf("store: save risk: %w", err)
			}
		}
		return nil
	})
}

// UserRisk returns a user's latest risk and signal counts (zero if none).
func (s *Moderation) UserRisk(ctx context.Context, userID string) (*moderation.Signals, error) {
	sg := &moderation.Signals{UserID: userID, Counts: map[string]int{}}
	var counts string
	err := s.db.QueryRowContext(ctx, `SELECT risk_score, signals FROM moderation_risk WHERE user_id = $1`, userID).Scan(&sg.RiskScore, &counts)
	if err == sql.ErrNoRows {
		return sg, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: user risk: %w", err)
	}
	return sg, json.Unmarshal([]byte(counts), &sg.Counts)
}
