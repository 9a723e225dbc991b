package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/stream"
)

func init() {
	// Every notification that enters or changes in the centre (a new one,
	// or one that absorbed another) goes to its owner's stream, in the same
	// transaction, in the shape the API shows it.
	registerNotificationPublisher(func(ctx context.Context, tx *sql.Tx, n *notify.Notification) error {
		// A notification that absorbed another keeps the delivery time an
		// app acknowledged earlier.
		var delivered sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT delivered_at FROM notifications WHERE id = $1`, n.ID).Scan(&delivered); err != nil {
			return fmt.Errorf("store: notification for the stream: %w", err)
		}
		return appendStream(ctx, tx, []string{n.UserID}, stream.KindNotification,
			stream.NotificationOf(n, fromNullMicros(delivered)), n.UpdatedAt)
	})
}
