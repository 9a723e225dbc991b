package store

import (
	"context"
	"fmt"
)

// MatchGraph answers what event recommendations ask of matching: how many
// of a person's accepted matches are going to each event. It reads both
// domains' tables in one query, so it lives with the SQL, not in either
// domain.
type MatchGraph struct{ db *DB }

// NewMatchGraph returns the match graph over db.
func NewMatchGraph(db *DB) *MatchGraph { return &MatchGraph{db: db} }

// MatchesGoing counts, per event of eventIDs, userID's accepted matches
// going to it.
func (g *MatchGraph) MatchesGoing(ctx context.Context, userID string, eventIDs []string) (map[string]int, error) {
	out := map[string]int{}
	if len(eventIDs) == 0 {
		return out, nil
	}
	args := []any{userID}
	for _, id := range eventIDs {
		args = append(args, id)
	}
	rows, err := g.db.DB.QueryContext(ctx, `SELECT r.event_id, COUNT(*) FROM event_rsvps r
		JOIN matches m ON m.status = 'accepted' AND ((m.user1_id = $1 AND m.user2_id = r.user_id) OR (m.user2_id = $1 AND m.user1_id = r.user_id))
		WHERE r.status = 'going' AND r.event_id IN (`+placeholders(2, len(eventIDs))+`)
		GROUP BY r.event_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: matches going: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		out[id] = n
	}
	return out, rows.Err()
}
