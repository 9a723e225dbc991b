package store

import (
	"context"
	"database/sql"
	"fmt"
)

func init() {
	registerEraser("user_blocks", []string{"blocker_id", "blocked_id"}, func(ctx context.Context, tx *sql.Tx, e erasure) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM user_blocks WHERE blocker_id = $1 OR blocked_id = $1`, e.UserID)
		return err
	})
}

// notBlocked is a WHERE fragment that is true when neither of the two user
// id expressions has blocked the other, e.g.
// `AND `+notBlocked("$1", "m.sender_id"). Queries that list people or what
// they wrote put it in, so a block hides both people from each other.
func notBlocked(a, b string) string {
	return `NOT EXISTS (SELECT 1 FROM user_blocks ub WHERE (ub.blocker_id = ` + a + ` AND ub.blocked_id = ` + b +
		`) OR (ub.blocker_id = ` + b + ` AND ub.blocked_id = ` + a + `))`
}

// querier is what both *sql.DB (through *DB) and *sql.Tx offer.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// blockedEitherWay reports whether a has blocked b or b has blocked a.
func blockedEitherWay(ctx context.Context, q querier, a, b string) (bool, error) {
	var blocked bool
	err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM user_blocks WHERE (blocker_id = $1 AND blocked_id = $2)
		OR (blocker_id = $2 AND blocked_id = $1))`, a, b).Scan(&blocked)
	if err != nil {
		return false, fmt.Errorf("store: read blocks: %w", err)
	}
	return blocked, nil
}
