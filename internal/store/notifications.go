package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/matchpoint-api/matchpoint/internal/notify"
)

func init() {
	deleteRowsOf("notifications", "user_id")
}

// addNotification records n inside the transaction of the change that causes
// it. With a collapse key, an unread notification with the same key absorbs
// it (its title, body and data become n's and its count grows); n.ID and
// n.Count then describe that record.
func addNotification(ctx context.Context, tx *sql.Tx, n *notify.Notification) error {
	data, err := json.Marshal(n.Data)
	if err != nil {
		return err
	}
	if n.CollapseKey != "" {
		var id string
		var count int
		err := tx.QueryRowContext(ctx, `UPDATE notifications SET title = $3, body = $4, data = $5, count = count + 1, updated_at = $6
			WHERE user_id = $1 AND collapse_key = $2 AND read_at IS NULL RETURNING id, count`,
			n.UserID, n.CollapseKey, n.Title, n.Body, string(data), micros(n.UpdatedAt)).Scan(&id, &count)
		if err == nil {
			n.ID, n.Count = id, count
			return nil
		}
		if err != sql.ErrNoRows {
			return fmt.Errorf("store: collapse notification: %w", err)
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO notifications (id, user_id, kind, title, body, data, collapse_key, count, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		n.ID, n.UserID, n.Kind, n.Title, n.Body, string(data), n.CollapseKey, n.Count, micros(n.CreatedAt), micros(n.UpdatedAt))
	if err != nil {
		return fmt.Errorf("store: add notification: %w", err)
	}
	return nil
}
