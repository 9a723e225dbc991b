package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
)

// APIKeys implements apikeys.Store.
type APIKeys struct {
	db    *DB
	batch *keyBatch
}

// NewAPIKeys returns the API key store over db.
func NewAPIKeys(db *DB) *APIKeys { return &APIKeys{db: db, batch: &keyBatch{db: db}} }

var _ apikeys.Store = (*APIKeys)(nil)

const keyColumns = `k.id, k.user_id, k.name, k.hint, k.scopes, k.created_at, k.last_used_at, k.revoked_at`

func readKey(row scanner, extra ...any) (*apikeys.Key, error) {
	var k apikeys.Key
	var scopes string
	var created int64
	var used, revoked sql.NullInt64
	dest := append([]any{&k.ID, &k.UserID, &k.Name, &k.Hint, &scopes, &created, &used, &revoked}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	k.Scopes = strings.Fields(scopes)
	k.CreatedAt, k.LastUsedAt, k.RevokedAt = fromMicros(created), fromNullMicros(used), fromNullMicros(revoked)
	return &k, nil
}

// CreateKey stores a key record and the hash of the key.
func (s *APIKeys) CreateKey(ctx context.Context, k *apikeys.Key, hash string) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO api_keys (id, user_id, name, key_hash, hint, scopes, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		k.ID, k.UserID, k.Name, hash, k.Hint, auth.FormatScopes(k.Scopes), micros(k.CreatedAt))
	if err != nil {
		return fmt.Errorf("store: create API key: %w", err)
	}
	return nil
}

// KeyByHash returns a key with its owner's account, sports included. It
// runs on every request: a key seen before comes from this process's memory
// for as long as nothing about it changed (credcache.go); lookups that reach
// the database together share one query (keyBatch); and a request that
// serves the caller's profile needs no second round trip for it.
func (s *APIKeys) KeyByHash(ctx context.Context, hash string) (*apikeys.KeyInfo, error) {
	c := s.db.creds.cache
	// On PostgreSQL, hear of every change committed until now first
	// (credBarrier).
	if b := s.db.creds.barrier; b == nil || b.fresh() || b.pass(ctx) == nil {
		if ki := c.get(hash); ki != nil {
			return ki, nil
		}
	}
	fill := c.begin() // before the query: see credCache.store
	ki, err := s.batch.get(ctx, hash)
	if err == nil {
		c.store(hash, ki, fill)
	}
	return ki, err
}

// KeyByID returns one of an account's keys.
func (s *APIKeys) KeyByID(ctx context.Context, userID, id string) (*apikeys.Key, error) {
	k, err := readKey(s.db.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys k WHERE k.id = $1 AND k.user_id = $2`, id, userID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.NotFoundf("no API key %q", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get API key: %w", err)
	}
	return k, nil
}

// ListKeys pages through an account's keys by id.
func (s *APIKeys) ListKeys(ctx context.Context, userID, after string, limit int) ([]*apikeys.Key, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+keyColumns+` FROM api_keys k WHERE k.user_id = $1 AND k.id > $2 ORDER BY k.id LIMIT $3`,
		userID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list API keys: %w", err)
	}
	defer rows.Close()
	var out []*apikeys.Key
	for rows.Next() {
		k, err := readKey(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list API keys: %w", err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// RevokeKey revokes a key; revoking twice keeps the first time.
func (s *APIKeys) RevokeKey(ctx context.Context, userID, id string, at time.Time) error {
	res, err := s.db.ExecContext(ctx, `UPDATE api_keys SET revoked_at = $3 WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL`, id, userID, micros(at))
	if err != nil {
		return fmt.Errorf("store: revoke API key: %w", err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		s.db.settle()
	}
	return nil
}

// TouchKey records use, at most once per interval across all nodes.
func (s *APIKeys) TouchKey(ctx context.Context, id string, at, since time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $3)`,
		id, micros(at), micros(since))
	if err != nil {
		return fmt.Errorf("store: touch API key: %w", err)
	}
	s.db.creds.cache.touched(id, at)
	return nil
}
