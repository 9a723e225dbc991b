package messaging

import (
	"encoding/json"

	"github.com/matchpoint-api/matchpoint/internal/moderation"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// View is the Message resource as the API and the real-time stream show it.
type View struct {
	Object         string  `json:"object" enum:"message"`
	ID             string  `json:"id" example:"msg_068b2k3n1ytkbrg5q9v7x8m0cg"`
	ConversationID string  `json:"conversation_id" example:"cnv_068b2k3n1ytkbrg5q9v7x8m0ch"`
	SenderID       string  `json:"sender_id" example:"usr_068ay3yzbf8z1rmbn3y0p6fs2g"`
	SenderDeleted  bool    `json:"sender_deleted" doc:"The sender's account was deleted: show \"deleted user\"; the message is a tombstone"`
	Body           *string `json:"body" example:"See you at 10?" doc:"null once deleted"`
	ReplyTo        *string `json:"reply_to" doc:"The thread this reply belongs to (its root message); null for a top-level message"`
	ReplyCount     int     `json:"reply_count" doc:"Replies in this message's thread"`
	LastReplyAt    *string `json:"last_reply_at" format:"date-time"`
	CreatedAt      string  `json:"created_at" format:"date-time"`
	EditedAt       *string `json:"edited_at" format:"date-time" doc:"Last edit; null if never edited"`
	Deleted        bool    `json:"deleted" doc:"A tombstone: the message was deleted and its body is gone"`
	DeletedAt      *string `json:"deleted_at" format:"date-time"`
	// Set on the answer to its sender when moderation had a say: held
	// (kept for a moderator, delivered if released), and the engine's answer.
	Status     string             `json:"status,omitempty" enum:"held" doc:"held: kept for a moderator and not delivered; it goes out if a moderator releases it"`
	Moderation *moderation.Result `json:"moderation,omitempty" doc:"The moderation engine's answer when it was not allow: warn (delivered; readers see it too, so their app can ask whether it bothers them), review (held, shown to its sender only; or delivered with support resources for self_harm)"`
}

// ViewOf renders a message.
func ViewOf(m *Message) View {
	v := View{Object: "message", ID: m.ID, ConversationID: m.ConversationID, SenderID: m.SenderID, SenderDeleted: m.SenderErased,
		ReplyCount: m.ReplyCount, LastReplyAt: wire.OptTime(m.LastReplyAt), CreatedAt: wire.Time(m.CreatedAt),
		EditedAt: wire.OptTime(m.EditedAt), Deleted: m.Deleted(), DeletedAt: wire.OptTime(m.DeletedAt)}
	if !m.Deleted() {
		b := m.Body
		v.Body = &b
	}
	if m.ThreadID != "" {
		t := m.ThreadID
		v.ReplyTo = &t
	}
	if m.Moderation != "" && !m.Deleted() {
		var r moderation.Result
		if json.Unmarshal([]byte(m.Moderation), &r) == nil {
			v.Moderation = &r
		}
	}
	return v
}

// Payload is data.message of message.sent and message.read webhooks (the
// shape of webhooks.MessageData).
type Payload struct {
	ID             string  `json:"id"`
	ConversationID string  `json:"conversation_id"`
	SenderID       string  `json:"sender_id"`
	Text           string  `json:"text,omitempty"`
	CreatedAt      string  `json:"created_at"`
	ReadBy         string  `json:"read_by,omitempty"`
	ReadAt         *string `json:"read_at,omitempty"`
}

func payloadOf(m *Message) Payload {
	return Payload{ID: m.ID, ConversationID: m.ConversationID, SenderID: m.SenderID, Text: m.Body, CreatedAt: wire.Time(m.CreatedAt)}
}

// ReadState is data of message.read stream entries.
type ReadState struct {
	ConversationID string `json:"conversation_id"`
	UserID         string `json:"user_id"`
	MessageID      string `json:"message_id"`
	ReadAt         string `json:"read_at"`
}
