package store

import (
	"context"
	"database/sql"

	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/stream"
)

func init() {
	// Every notification that enters or changes in the centre (a new one,
	// or one that absorbed another) goes to its owner's stream, in the same
	// transaction, in the shape the API shows it.
	registerNotificationPublisher(func(ctx context.Context, tx *sql.Tx, n *notify.Notification) error {
		// A notification that absorbed another keeps the delivery time an
		// app acknowledged earlier (writeNotification read it back).
		return appendStream(ctx, tx, []string{n.UserID}, stream.KindNotification,
			stream.NotificationOf(n, n.DeliveredAt), n.UpdatedAt)
	})
}
