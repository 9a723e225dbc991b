package store

import (
	"context"
	"fmt"
)

// InstanceKey returns the named secret shared by every node of this
// deployment (for example the key that signs CSRF tokens), creating it with
// gen on first use. The first node to insert wins; the others read its value.
func (db *DB) InstanceKey(ctx context.Context, name string, gen func() string, now int64) (string, error) {
	if _, err := db.ExecContext(ctx, `INSERT INTO instance_keys (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`,
		name, gen(), now); err != nil {
		return "", fmt.Errorf("store: create instance key: %w", err)
	}
	var v string
	if err := db.QueryRowContext(ctx, `SELECT value FROM instance_keys WHERE name = $1`, name).Scan(&v); err != nil {
		return "", fmt.Errorf("store: read instance key: %w", err)
	}
	return v, nil
}
