// Package outbox defines the platform event that a domain change records in the
// same database transaction as the change itself. Webhook delivery reads these
// rows later, so an event exists if and only if its change committed.
package outbox

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// Event kinds of the API document, section 6.1.
const (
	UserCreated           = "user.created"
	UserUpdated           = "user.updated"
	UserVerified          = "user.verified"
	UserDeleted           = "user.deleted"
	MatchCreated          = "match.created"
	MatchAccepted         = "match.accepted"
	MatchDeclined         = "match.declined"
	MatchExpired          = "match.expired"
	EventCreated          = "event.created"
	EventUpdated          = "event.updated"
	EventRSVP             = "event.rsvp"
	EventCancelled        = "event.cancelled"
	MessageSent           = "message.sent"
	MessageRead           = "message.read"
	NotificationSent      = "notification.sent"
	NotificationDelivered = "notification.delivered"
)

// Consumers of the outbox. Every event gets a pending row per consumer in
// the transaction that records it; a consumer claims rows with a lease and
// deletes them in its own transaction when their work is recorded.
const ConsumerWebhooks = "webhooks"

// Consumers lists every consumer.
var Consumers = []string{ConsumerWebhooks}

// Kinds lists every event kind, in the document's order.
var Kinds = []string{
	UserCreated, UserUpdated, UserVerified, UserDeleted,
	MatchCreated, MatchAccepted, MatchDeclined, MatchExpired,
	EventCreated, EventUpdated, EventRSVP, EventCancelled,
	MessageSent, MessageRead, NotificationSent, NotificationDelivered,
}

// Event is one outbox row: the envelope of section 6.2 plus what delivery
// needs to decide who may see it.
type Event struct {
	ID      string
	Type    string
	Created time.Time
	// UserID is the account the event is about (erasure finds its events by it).
	UserID string
	// Audience lists the accounts that may read what the event is about
	// through the API. A webhook subscriber that is not an Enterprise admin
	// receives the event only if its account is in it. New sets it to the
	// subject alone; a domain widens it (both people of a match, the members
	// of a conversation) before writing the event.
	Audience []string
	// Payload is the whole JSON envelope as it will be delivered.
	Payload []byte
}

// Envelope is the wire shape of section 6.2.
type Envelope struct {
	ID      string                     `json:"id"`
	Type    string                     `json:"type"`
	Created string                     `json:"created"`
	Data    map[string]json.RawMessage `json:"data"`
}

// New builds an event whose data holds one object named resource.
func New(now time.Time, typ, userID, resource string, obj any) (Event, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return Event{}, fmt.Errorf("outbox: encode %s: %w", typ, err)
	}
	ev := Event{ID: ids.New(ids.Envelope), Type: typ, Created: now.UTC(), UserID: userID}
	if userID != "" {
		ev.Audience = []string{userID}
	}
	ev.Payload, err = json.Marshal(Envelope{
		ID:      ev.ID,
		Type:    typ,
		Created: wire.Time(ev.Created),
		Data:    map[string]json.RawMessage{resource: raw},
	})
	if err != nil {
		return Event{}, fmt.Errorf("outbox: encode envelope: %w", err)
	}
	return ev, nil
}
