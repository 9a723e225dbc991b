package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/stream"
)

func init() {
	// Every notification that enters or changes in the centre (a new one,
	// or one that absorbed another) goes to its owner's stream, in the same
	// transaction, in the shape the API shows it.
	registerNotificationPublisher(func(ctx context.Context, tx *sql.Tx, ns []*notify.Notification) error {
		entries := make([]streamEntry, len(ns))
		for i, n := range ns {
			// A notification that absorbed another keeps the delivery time
			// an app acknowledged earlier (upsertNotifications read it back).
			body, err := json.Marshal(stream.NotificationOf(n, n.DeliveredAt))
			if err != nil {
				return fmt.Errorf("store: encode notification stream event: %w", err)
			}
			// The tags tagsOf would read back out of body.
			tags := &streamTags{conversationID: n.Data["conversation_id"], messageID: n.Data["message_id"]}
			entries[i] = streamEntry{userID: n.UserID, kind: stream.KindNotification, body: body, at: n.UpdatedAt, tags: tags}
		}
		appendStreamEntries(tx, entries)
		return nil
	})
}
