package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/idempotency"
)

// Idempotency implements idempotency.Store.
type Idempotency struct{ db *DB }

// NewIdempotency returns the idempotency store over db.
func NewIdempotency(db *DB) *Idempotency { return &Idempotency{db: db} }

var _ idempotency.Store = (*Idempotency)(nil)

// Claim inserts an in-progress row, or returns the live one already there.
// An expired row, or a claim that has had no answer since staleBefore, is
// replaced. When the row it collided with is gone by the time it is read (a
// concurrent Release won), it claims again.
func (s *Idempotency) Claim(ctx context.Context, owner, key, requestHash string, now, notBefore, staleBefore time.Time) (*idempotency.Record, error) {
	for range 5 {
		rec, err := s.claim(ctx, owner, key, requestHash, now, notBefore, staleBefore)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("store: claim idempotency key: %w", err)
		}
		return rec, nil
	}
	return nil, idempotency.ErrInProgress
}

func (s *Idempotency) claim(ctx context.Context, owner, key, requestHash string, now, notBefore, staleBefore time.Time) (*idempotency.Record, error) {
	var rec *idempotency.Record
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE owner = $1 AND key = $2
			AND (created_at < $3 OR (status = 0 AND created_at < $4))`,
			owner, key, micros(notBefore), micros(staleBefore)); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO idempotency_keys (owner, key, request_hash, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (owner, key) DO NOTHING`, owner, key, requestHash, micros(now))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return nil
		}
		var headers, body string
		rec = &idempotency.Record{}
		err = tx.QueryRowContext(ctx, `SELECT request_hash, status, headers, body FROM idempotency_keys WHERE owner = $1 AND key = $2`,
			owner, key).Scan(&rec.RequestHash, &rec.Status, &headers, &body)
		if err != nil {
			return err
		}
		rec.Body = []byte(body)
		return json.Unmarshal([]byte(headers), &rec.Headers)
	})
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// Finish stores the response of a claimed key.
func (s *Idempotency) Finish(ctx context.Context, owner, key string, r *idempotency.Record) error {
	headers, err := json.Marshal(r.Headers)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `UPDATE idempotency_keys SET status = $3, headers = $4, body = $5 WHERE owner = $1 AND key = $2`,
		owner, key, r.Status, string(headers), string(r.Body))
	if err != nil {
		return fmt.Errorf("store: finish idempotency key: %w", err)
	}
	return nil
}

// Release forgets a claimed key.
func (s *Idempotency) Release(ctx context.Context, owner, key string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE owner = $1 AND key = $2`, owner, key); err != nil {
		return fmt.Errorf("store: release idempotency key: %w", err)
	}
	return nil
}
