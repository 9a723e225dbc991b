package notifications

import (
	"time"

	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// EventNotification is data.notification of notification.sent and
// notification.delivered: the record without its body, which may quote a
// message (a webhook subscriber sees only what the notified person could
// read, and the title names what happened without quoting it), and the
// delivery the event is about.
type EventNotification struct {
	Object    string            `json:"object"`
	ID        string            `json:"id"`
	UserID    string            `json:"user_id"`
	Kind      string            `json:"kind"`
	Title     string            `json:"title"`
	Data      map[string]string `json:"data"`
	Count     int               `json:"count"`
	CreatedAt string            `json:"created_at"`
	UpdatedAt string            `json:"updated_at"`
	ReadAt    *string           `json:"read_at"`
	Delivery  EventDelivery     `json:"delivery"`
}

// EventDelivery says which delivery an event is about.
type EventDelivery struct {
	// Channel is push (a provider took it) or app (the app acknowledged it).
	Channel  string `json:"channel"`
	Platform string `json:"platform,omitempty"` // webpush, apns or fcm
	DeviceID string `json:"device_id,omitempty"`
	At       string `json:"at"`
}

// Delivery channels of events.
const (
	DeliveryPush = "push"
	DeliveryApp  = "app"
)

// event builds a notification event about r for the notified person alone
// (Audience and UserID: erasing the account redacts it).
func event(kind string, now time.Time, r *Record, d EventDelivery) (*outbox.Event, error) {
	d.At = wire.Time(now)
	ev, err := outbox.New(now, kind, r.UserID, "notification", EventNotification{
		Object: "notification", ID: r.ID, UserID: r.UserID, Kind: r.Kind, Title: r.Title, Data: r.Data, Count: r.Count,
		CreatedAt: wire.Time(r.CreatedAt), UpdatedAt: wire.Time(r.UpdatedAt), ReadAt: wire.OptTime(r.ReadAt), Delivery: d,
	})
	if err != nil {
		return nil, err
	}
	ev.Audience = []string{r.UserID}
	return &ev, nil
}

func pushDelivery(dev *Device) EventDelivery {
	return EventDelivery{Channel: DeliveryPush, Platform: dev.Platform, DeviceID: dev.ID}
}

// SentEvent is notification.sent for a push handed to the provider of dev.
func SentEvent(now time.Time, r *Record, dev *Device) (*outbox.Event, error) {
	return event(outbox.NotificationSent, now, r, pushDelivery(dev))
}

// DeliveredEvent is notification.delivered for a push the provider of dev
// accepted.
func DeliveredEvent(now time.Time, r *Record, dev *Device) (*outbox.Event, error) {
	return event(outbox.NotificationDelivered, now, r, pushDelivery(dev))
}

// AckEvent is notification.delivered for an app's acknowledgement.
func AckEvent(now time.Time, r *Record) (*outbox.Event, error) {
	return event(outbox.NotificationDelivered, now, r, EventDelivery{Channel: DeliveryApp})
}
