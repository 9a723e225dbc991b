package stream

import (
	"time"

	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// Notification is the data of a notification event: the notification as
// GET /v1/notifications/{id} shows it to its owner (the only recipient).
type Notification struct {
	Object      string            `json:"object"`
	ID          string            `json:"id"`
	Kind        string            `json:"kind"`
	Title       string            `json:"title"`
	Body        string            `json:"body"`
	Data        map[string]string `json:"data"`
	Count       int               `json:"count"`
	CreatedAt   string            `json:"created_at"`
	UpdatedAt   string            `json:"updated_at"`
	ReadAt      *string           `json:"read_at"`
	DeliveredAt *string           `json:"delivered_at"`
}

// NotificationOf renders n (as it was just written) for the stream.
func NotificationOf(n *notify.Notification, deliveredAt *time.Time) Notification {
	data := n.Data
	if data == nil {
		data = map[string]string{}
	}
	return Notification{Object: "notification", ID: n.ID, Kind: n.Kind, Title: n.Title, Body: n.Body, Data: data, Count: n.Count,
		CreatedAt: wire.Time(n.CreatedAt), UpdatedAt: wire.Time(n.UpdatedAt), ReadAt: wire.OptTime(n.ReadAt), DeliveredAt: wire.OptTime(deliveredAt)}
}
