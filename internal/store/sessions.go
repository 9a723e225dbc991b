package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/sessions"
)

// Sessions implements sessions.Store.
type Sessions struct{ db *DB }

// NewSessions returns the sessions store over db.
func NewSessions(db *DB) *Sessions { return &Sessions{db: db} }

var _ sessions.Store = (*Sessions)(nil)

// CreateSession stores a session.
func (s *Sessions) CreateSession(ctx context.Context, id, hash, userID string, created, expires time.Time) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO web_sessions (id, token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
		id, hash, userID, micros(created), micros(expires))
	if err != nil {
		return fmt.Errorf("store: create session: %w", err)
	}
	return nil
}

// SessionUser returns the user of a live session of a live account.
func (s *Sessions) SessionUser(ctx context.Context, hash string, now time.Time) (string, error) {
	var id string
	err := s.db.QueryRowContext(ctx, `SELECT s.user_id FROM web_sessions s JOIN users u ON u.id = s.user_id
		WHERE s.token_hash = $1 AND s.expires_at > $2 AND u.deleted_at IS NULL`, hash, micros(now)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", apperr.NotFoundf("no session")
	}
	if err != nil {
		return "", fmt.Errorf("store: get session: %w", err)
	}
	return id, nil
}

// DeleteSession ends a session.
func (s *Sessions) DeleteSession(ctx context.Context, hash string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM web_sessions WHERE token_hash = $1`, hash); err != nil {
		return fmt.Errorf("store: delete session: %w", err)
	}
	return nil
}
