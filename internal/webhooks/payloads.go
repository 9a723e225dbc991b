package webhooks

import (
	"encoding/json"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// The payload shapes of every kind, for the OpenAPI document's webhooks
// section and for test deliveries. user.* are what the users domain emits;
// match and event follow the API document's section 2; rsvp, message and
// notification are this service's shapes for what the document leaves open.

// UserData is data.user of user.created, user.updated and user.verified.
type UserData struct {
	ID        string   `json:"id" example:"usr_068b2k3n1ytkbrg5q9v7x8m0cb"`
	Email     string   `json:"email,omitempty" doc:"Only for the user's own subscriptions and Enterprise admin ones" example:"ann@example.com"`
	Username  string   `json:"username" example:"ann"`
	FirstName string   `json:"first_name" example:"Ann"`
	LastName  string   `json:"last_name" example:"Lee"`
	Sports    []string `json:"sports" example:"[\"tennis\"]"`
	Location  string   `json:"location" example:"Lyon"`
	Verified  bool     `json:"verified"`
	CreatedAt string   `json:"created_at" format:"date-time"`
}

// UserDeletedData is data.user of user.deleted: no personal data remains.
type UserDeletedData struct {
	ID        string `json:"id"`
	Deleted   bool   `json:"deleted"`
	CreatedAt string `json:"created_at" format:"date-time"`
	DeletedAt string `json:"deleted_at" format:"date-time"`
}

// MatchData is data.match of match.* events.
type MatchData struct {
	ID                 string   `json:"id"`
	User1ID            string   `json:"user1_id"`
	User2ID            string   `json:"user2_id"`
	CompatibilityScore int      `json:"compatibility_score" minimum:"0" maximum:"100"`
	CommonSports       []string `json:"common_sports"`
	Status             string   `json:"status" enum:"pending,accepted,declined,expired"`
	CreatedAt          string   `json:"created_at" format:"date-time"`
}

// EventData is data.event of event.created, event.updated, event.cancelled.
type EventData struct {
	ID              string `json:"id"`
	Title           string `json:"title"`
	Description     string `json:"description"`
	Sport           string `json:"sport"`
	Location        string `json:"location"`
	Date            string `json:"date" format:"date-time" doc:"Start of the event"`
	Timezone        string `json:"timezone" doc:"IANA time zone of the event"`
	MaxParticipants int    `json:"max_participants"`
	CreatorID       string `json:"creator_id"`
	Status          string `json:"status" enum:"scheduled,cancelled"`
	CreatedAt       string `json:"created_at" format:"date-time"`
}

// RSVPData is data.rsvp of event.rsvp.
type RSVPData struct {
	ID        string `json:"id"`
	EventID   string `json:"event_id"`
	UserID    string `json:"user_id"`
	Status    string `json:"status" enum:"going,waitlisted,declined"`
	CreatedAt string `json:"created_at" format:"date-time"`
}

// MessageData is data.message of message.sent and message.read.
type MessageData struct {
	ID             string  `json:"id"`
	ConversationID string  `json:"conversation_id"`
	SenderID       string  `json:"sender_id"`
	Text           string  `json:"text,omitempty" doc:"message.sent only: a read receipt does not repeat the text, which is the sender's and goes when they delete it"`
	CreatedAt      string  `json:"created_at" format:"date-time"`
	ReadBy         string  `json:"read_by,omitempty" doc:"message.read: who read it"`
	ReadAt         *string `json:"read_at,omitempty" format:"date-time" doc:"message.read: when"`
}

// NotificationData is data.notification of notification.* events. The body
// text is never included (it may quote content only its recipient reads).
type NotificationData struct {
	ID          string            `json:"id"`
	UserID      string            `json:"user_id"`
	Kind        string            `json:"kind"`
	Title       string            `json:"title"`
	Data        map[string]string `json:"data"`
	Channel     string            `json:"channel,omitempty" enum:"push,email,in_app" doc:"notification.delivered: where"`
	CreatedAt   string            `json:"created_at" format:"date-time"`
	DeliveredAt *string           `json:"delivered_at,omitempty" format:"date-time"`
}

// WebhookData is data.webhook of webhook.failing.
type WebhookData struct {
	ID           string `json:"id"`
	URL          string `json:"url"`
	Status       string `json:"status"`
	FailingSince string `json:"failing_since" format:"date-time"`
	LastError    string `json:"last_error"`
	DeliveryID   string `json:"delivery_id" doc:"The delivery that exhausted its retries"`
}

// KindDoc describes one kind for the reference.
type KindDoc struct {
	Kind, Resource, Summary string
	Example                 any // the data.<resource> object
}

// Docs lists every kind a subscriber may receive, in the document's order.
func Docs(now time.Time) []KindDoc {
	t := wire.Time(now)
	user := UserData{ID: "usr_068b2k3n1ytkbrg5q9v7x8m0cb", Email: "ann@example.com", Username: "ann", FirstName: "Ann",
		LastName: "Lee", Sports: []string{"tennis", "running"}, Location: "Lyon", CreatedAt: t}
	verified := user
	verified.Verified = true
	match := MatchData{ID: "mch_068b2k3n1ytkbrg5q9v7x8m0cd", User1ID: user.ID, User2ID: "usr_068b2k3n1ytkbrg5q9v7x8m0ce",
		CompatibilityScore: 87, CommonSports: []string{"tennis"}, Status: "pending", CreatedAt: t}
	ev := EventData{ID: "evt_068b2k3n1ytkbrg5q9v7x8m0cf", Title: "Sunday doubles", Description: "Friendly doubles, all levels",
		Sport: "tennis", Location: "Parc de la Tête d'Or, Lyon", Date: wire.Time(now.Add(72 * time.Hour)), Timezone: "Europe/Paris",
		MaxParticipants: 4, CreatorID: user.ID, Status: "scheduled", CreatedAt: t}
	msg := MessageData{ID: "msg_068b2k3n1ytkbrg5q9v7x8m0cg", ConversationID: "cnv_068b2k3n1ytkbrg5q9v7x8m0ch", SenderID: user.ID,
		Text: "See you at 10?", CreatedAt: t}
	read := msg
	read.Text, read.ReadBy, read.ReadAt = "", match.User2ID, &t
	ntf := NotificationData{ID: "ntf_068b2k3n1ytkbrg5q9v7x8m0cj", UserID: user.ID, Kind: "message.new", Title: "Bo sent you a message",
		Data: map[string]string{"conversation_id": msg.ConversationID}, CreatedAt: t}
	delivered := ntf
	delivered.Channel, delivered.DeliveredAt = "push", &t
	pick := func(m MatchData, status string) MatchData { m.Status = status; return m }
	cancelled := ev
	cancelled.Status = "cancelled"
	return []KindDoc{
		{outbox.UserCreated, "user", "A user account is created", user},
		{outbox.UserUpdated, "user", "Profile information is modified", user},
		{outbox.UserVerified, "user", "A user completes ID verification", verified},
		{outbox.UserDeleted, "user", "A user account is deleted", UserDeletedData{ID: user.ID, Deleted: true, CreatedAt: t, DeletedAt: t}},
		{outbox.MatchCreated, "match", "A match between users is created", match},
		{outbox.MatchAccepted, "match", "A user accepts a match request", pick(match, "accepted")},
		{outbox.MatchDeclined, "match", "A user declines a match request", pick(match, "declined")},
		{outbox.MatchExpired, "match", "A match request expires", pick(match, "expired")},
		{outbox.EventCreated, "event", "A sports event is created", ev},
		{outbox.EventUpdated, "event", "Event details are modified", ev},
		{outbox.EventRSVP, "rsvp", "A user RSVPs to an event", RSVPData{ID: "rsv_068b2k3n1ytkbrg5q9v7x8m0ck", EventID: ev.ID,
			UserID: match.User2ID, Status: "going", CreatedAt: t}},
		{outbox.EventCancelled, "event", "An event is cancelled", cancelled},
		{outbox.MessageSent, "message", "A message is sent", msg},
		{outbox.MessageRead, "message", "A message is read", read},
		{outbox.NotificationSent, "notification", "A push notification is sent", ntf},
		{outbox.NotificationDelivered, "notification", "A notification is delivered", delivered},
		{KindFailing, "webhook", "Another endpoint of the account exhausted its retries (sent to the account's other active endpoints without being asked for)",
			WebhookData{ID: "whk_068b2k3n1ytkbrg5q9v7x8m0cm", URL: "https://hooks.example.com/matchpoint", Status: StatusFailing,
				FailingSince: t, LastError: "the endpoint answered 503", DeliveryID: "dlv_068b2k3n1ytkbrg5q9v7x8m0cn"}},
	}
}

// ExamplePayload is the envelope of a test delivery of kind, with a fresh id.
func ExamplePayload(kind string, now time.Time) ([]byte, string, error) {
	for _, d := range Docs(now) {
		if d.Kind == kind {
			ev, err := outbox.New(now, kind, "", d.Resource, d.Example)
			return ev.Payload, ev.ID, err
		}
	}
	return nil, "", nil
}

// FailingEvent is the outbox event that tells the account's other
// endpoints; the store writes it in the transaction that marks the
// subscription failing.
func FailingEvent(now time.Time, sub *Subscription, deliveryID, lastError string) (outbox.Event, error) {
	since := now
	if sub.FailingSince != nil {
		since = *sub.FailingSince
	}
	return outbox.New(now, KindFailing, sub.UserID, "webhook", WebhookData{ID: sub.ID, URL: sub.URL, Status: StatusFailing,
		FailingSince: wire.Time(since), LastError: lastError, DeliveryID: deliveryID})
}

// failingID reads data.webhook.id of a webhook.failing payload.
func failingID(payload []byte) string {
	var env struct {
		Data struct {
			Webhook struct {
				ID string `json:"id"`
			} `json:"webhook"`
		} `json:"data"`
	}
	_ = json.Unmarshal(payload, &env)
	return env.Data.Webhook.ID
}
