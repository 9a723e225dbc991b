// Package notify defines the notification record: one per thing a person
// should hear about (a new message, a match request, an event change, a
// webhook endpoint failing...). Every domain writes its notifications in the
// transaction of the change that causes them, as it writes outbox events; the
// notifications domain lists them, applies preferences and sends push and
// email from there.
package notify

import (
	"time"

	"github.com/matchpoint-api/matchpoint/internal/ids"
)

// Kinds of notification. A kind names what happened, for preferences (per
// kind and channel) and for client apps to choose an icon or a screen.
const (
	KindMessage             = "message.new"
	KindMatchRequested      = "match.requested"
	KindMatchAccepted       = "match.accepted"
	KindMatchDeclined       = "match.declined"
	KindMatchExpired        = "match.expired"
	KindEventUpdated        = "event.updated"
	KindEventCancelled      = "event.cancelled"
	KindEventPromoted       = "event.waitlist_promoted"
	KindEventReminder       = "event.reminder"
	KindWebhookFailing      = "webhook.failing"
	KindVerificationDecided = "verification.decided"
	KindModerationDecision  = "moderation.decision"
)

// Kinds lists every kind.
var Kinds = []string{
	KindMessage, KindMatchRequested, KindMatchAccepted, KindMatchDeclined, KindMatchExpired,
	KindEventUpdated, KindEventCancelled, KindEventPromoted, KindEventReminder,
	KindWebhookFailing, KindVerificationDecided, KindModerationDecision,
}

// Notification is one record in a person's notification centre.
type Notification struct {
	ID     string
	UserID string // who is told
	Kind   string
	Title  string // one line, e.g. "Ann sent you a message"
	Body   string // a short text; may quote content, so it never leaves the user's own view (webhooks omit it)
	// Data holds the ids a client app opens (conversation_id, match_id, event_id...).
	Data map[string]string
	// CollapseKey, when set, folds notifications: while an unread one with the
	// same key exists for the user, it is updated (Count grows) instead of a
	// new one being added, e.g. one per conversation while unread.
	CollapseKey string
	Count       int
	CreatedAt   time.Time
	UpdatedAt   time.Time
	ReadAt      *time.Time
	// DeliveredAt is when an app acknowledged the record n was written to
	// (one that absorbed n keeps its own), as the store read it back.
	DeliveredAt *time.Time
}

// New builds a notification for userID.
func New(now time.Time, userID, kind, title, body string, data map[string]string) *Notification {
	if data == nil {
		data = map[string]string{}
	}
	return &Notification{ID: ids.New(ids.Notification), UserID: userID, Kind: kind, Title: title, Body: body,
		Data: data, Count: 1, CreatedAt: now.UTC(), UpdatedAt: now.UTC()}
}
