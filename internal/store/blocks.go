package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/matching"
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

// Blocked reports a block either way (matching.Store).
func (s *Matching) Blocked(ctx context.Context, a, b string) (bool, error) {
	return blockedEitherWay(ctx, s.db, a, b)
}

// Block records a block, cancels pending requests between the two and
// forgets showings, in one transaction. Blocking again keeps the first time.
func (s *Matching) Block(ctx context.Context, blocker, blocked string, now time.Time) (*matching.Block, error) {
	b := &matching.Block{BlockerID: blocker, BlockedID: blocked}
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO user_blocks (blocker_id, blocked_id, created_at) VALUES ($1, $2, $3)
			ON CONFLICT (blocker_id, blocked_id) DO NOTHING`, blocker, blocked, micros(now)); err != nil {
			return fmt.Errorf("store: block: %w", err)
		}
		var created int64
		if err := tx.QueryRowContext(ctx, `SELECT created_at FROM user_blocks WHERE blocker_id = $1 AND blocked_id = $2`, blocker, blocked).Scan(&created); err != nil {
			return fmt.Errorf("store: block: %w", err)
		}
		b.CreatedAt = fromMicros(created)
		invited, err := queryStrings(ctx, tx, `UPDATE matches SET status = 'cancelled', updated_at = $2, closed_at = $2
			WHERE pair_key = $1 AND status = 'pending' RETURNING user2_id`, pairKey(blocker, blocked), micros(now))
		if err != nil {
			return fmt.Errorf("store: block: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM match_impressions WHERE (viewer_id = $1 AND candidate_id = $2) OR (viewer_id = $2 AND candidate_id = $1)`,
			blocker, blocked); err != nil {
			return fmt.Errorf("store: block: %w", err)
		}
		return refreshPending(ctx, tx, invited...)
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Unblock lifts a block.
func (s *Matching) Unblock(ctx context.Context, blocker, blocked string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM user_blocks WHERE blocker_id = $1 AND blocked_id = $2`, blocker, blocked)
	if err != nil {
		return fmt.Errorf("store: unblock: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return apperr.NotFoundf("you have not blocked %q", blocked)
	}
	return nil
}

// ListBlocks pages the people blocker blocks, by user id.
func (s *Matching) ListBlocks(ctx context.Context, blocker, after string, limit int) ([]*matching.Block, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT blocked_id, created_at FROM user_blocks WHERE blocker_id = $1 AND blocked_id > $2
		ORDER BY blocked_id LIMIT $3`, blocker, after, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list blocks: %w", err)
	}
	defer rows.Close()
	var out []*matching.Block
	for rows.Next() {
		b := &matching.Block{BlockerID: blocker}
		var created int64
		if err := rows.Scan(&b.BlockedID, &created); err != nil {
			return nil, fmt.Errorf("store: list blocks: %w", err)
		}
		b.CreatedAt = fromMicros(created)
		out = append(out, b)
	}
	return out, rows.Err()
}
