package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/matchpoint-api/matchpoint/internal/outbox"
)

// appendEvent writes an outbox event inside the transaction of its change.
func appendEvent(ctx context.Context, tx *sql.Tx, ev *outbox.Event) error {
	if ev == nil {
		return nil
	}
	_, err := tx.ExecContext(ctx,
		`INSERT INTO outbox_events (id, type, user_id, payload, created_at) VALUES ($1, $2, $3, $4, $5)`,
		ev.ID, ev.Type, ev.UserID, string(ev.Payload), micros(ev.Created))
	if err != nil {
		return fmt.Errorf("store: append %s event: %w", ev.Type, err)
	}
	return nil
}

// Outbox reads recorded events in order; webhook delivery builds on it.
type Outbox struct{ db *DB }

// NewOutbox returns the outbox over db.
func NewOutbox(db *DB) *Outbox { return &Outbox{db: db} }

// After returns up to limit events recorded after sequence number seq.
func (o *Outbox) After(ctx context.Context, seq int64, limit int) ([]outbox.Event, []int64, error) {
	rows, err := o.db.QueryContext(ctx,
		`SELECT seq, id, type, COALESCE(user_id, ''), payload, created_at FROM outbox_events WHERE seq > $1 ORDER BY seq LIMIT $2`,
		seq, limit)
	if err != nil {
		return nil, nil, fmt.Errorf("store: read outbox: %w", err)
	}
	defer rows.Close()
	var evs []outbox.Event
	var seqs []int64
	for rows.Next() {
		var ev outbox.Event
		var s, created int64
		var payload string
		if err := rows.Scan(&s, &ev.ID, &ev.Type, &ev.UserID, &payload, &created); err != nil {
			return nil, nil, fmt.Errorf("store: read outbox: %w", err)
		}
		ev.Payload, ev.Created = []byte(payload), fromMicros(created)
		evs = append(evs, ev)
		seqs = append(seqs, s)
	}
	return evs, seqs, rows.Err()
}
