package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/matchpoint-api/matchpoint/internal/messaging"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/stream"
)

// The stream keeps a week of rows, replayed by Last-Event-ID, so it must
// keep showing only what the API shows: rows are filed by what they are
// about (streamTags) so that a deleted message's or an erased author's text
// can be blanked where it is quoted, and so that a conversation's message
// rows stop reaching someone who left it or who blocks their author.

// streamTags is what a stream row is about.
type streamTags struct{ conversationID, messageID, actorID string }

// tagsOf reads the tags out of a row's data: a message (message.sent,
// edited, deleted), a read marker or typing (conversation_id, user_id,
// message_id), or a notification about a message (data.message_id).
func tagsOf(kind string, body []byte) streamTags {
	var d struct {
		ConversationID string `json:"conversation_id"`
		UserID         string `json:"user_id"`
		MessageID      string `json:"message_id"`
		Message        *struct {
			ID             string `json:"id"`
			ConversationID string `json:"conversation_id"`
			SenderID       string `json:"sender_id"`
		} `json:"message"`
		Data map[string]string `json:"data"`
	}
	if json.Unmarshal(body, &d) != nil {
		return streamTags{}
	}
	if kind == stream.KindNotification {
		return streamTags{conversationID: d.Data["conversation_id"], messageID: d.Data["message_id"]}
	}
	if d.Message != nil {
		return streamTags{conversationID: d.Message.ConversationID, messageID: d.Message.ID, actorID: d.Message.SenderID}
	}
	return streamTags{conversationID: d.ConversationID, messageID: d.MessageID, actorID: d.UserID}
}

// streamVisible is true for a row (e) its recipient may still see: the
// rows about a conversation's messages (messages, edits, deletes, read
// markers, typing, and notifications of new messages) only while the
// recipient is a member and neither blocks the person they are from.
// Conversation updates are not filtered: a removed member learns of its
// removal.
var streamVisible = `(e.conversation_id IS NULL OR e.kind = '` + messaging.StreamUpdated + `' OR (
	EXISTS (SELECT 1 FROM conversation_members sm WHERE sm.conversation_id = e.conversation_id AND sm.user_id = e.user_id AND sm.left_at IS NULL)
	AND NOT EXISTS (SELECT 1 FROM user_blocks ub, (SELECT COALESCE(e.actor_id, (SELECT sx.sender_id FROM messages sx WHERE sx.id = e.message_id)) AS id) a
		WHERE a.id <> e.user_id AND ((ub.blocker_id = a.id AND ub.blocked_id = e.user_id) OR (ub.blocker_id = e.user_id AND ub.blocked_id = a.id)))))`

// redactStream blanks the message text of the rows that where selects:
// data.message.body becomes null (as a tombstone shows it), a
// notification's body empty, and, for an erased author, the notification's
// title (which names them) generic and the message marked as from a
// deleted user.
func redactStream(ctx context.Context, tx *sql.Tx, erased bool, where string, args ...any) error {
	if err := flushPending(ctx, tx); err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT seq, kind, data FROM stream_events WHERE `+where, args...)
	if err != nil {
		return fmt.Errorf("store: redact the stream: %w", err)
	}
	type row struct {
		seq        int64
		kind, data string
	}
	var todo []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.seq, &r.kind, &r.data); err != nil {
			rows.Close()
			return fmt.Errorf("store: redact the stream: %w", err)
		}
		todo = append(todo, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: redact the stream: %w", err)
	}
	for _, r := range todo {
		data, err := redactData(r.kind, r.data, erased)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE stream_events SET data = $2 WHERE seq = $1`, r.seq, data); err != nil {
			return fmt.Errorf("store: redact the stream: %w", err)
		}
	}
	return nil
}

func redactData(kind, data string, erased bool) (string, error) {
	var d map[string]json.RawMessage
	if err := json.Unmarshal([]byte(data), &d); err != nil {
		return "", fmt.Errorf("store: redact a %s stream row: %w", kind, err)
	}
	if kind == stream.KindNotification {
		d["body"] = json.RawMessage(`""`)
		if erased {
			d["title"] = json.RawMessage(`"` + erasedMessageTitle + `"`)
		}
	} else if raw, ok := d["message"]; ok {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return "", fmt.Errorf("store: redact a %s stream row: %w", kind, err)
		}
		m["body"], m["deleted"] = json.RawMessage(`null`), json.RawMessage(`true`)
		delete(m, "moderation")
		if erased {
			m["sender_deleted"] = json.RawMessage(`true`)
		}
		b, err := json.Marshal(m)
		if err != nil {
			return "", err
		}
		d["message"] = b
	}
	b, err := json.Marshal(d)
	return string(b), err
}

// erasedMessageTitle replaces the title of a notification about an erased
// account's message, which named them.
const erasedMessageTitle = "Message from a deleted user"

// likeMessageID matches a notification's data (compact JSON of a string
// map) that names message id.
func likeMessageID(id string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return `%"message_id":"` + r.Replace(id) + `"%`
}

// redactMessage blanks a deleted message's text wherever it is quoted
// besides the message itself: its readers' notifications and the stream
// rows that carry it or them.
func redactMessage(ctx context.Context, tx *sql.Tx, conversationID, messageID string) error {
	if _, err := tx.ExecContext(ctx, `UPDATE notifications SET body = '' WHERE kind = $1 AND collapse_key = $2
		AND data LIKE $3 ESCAPE '\'`, notify.KindMessage, "conversation:"+conversationID, likeMessageID(messageID)); err != nil {
		return fmt.Errorf("store: redact notifications: %w", err)
	}
	return redactStream(ctx, tx, false, `message_id = $1`, messageID)
}

// redactAuthor does the same for every message of an erased account, and
// takes its name out of the notifications' titles.
func redactAuthor(ctx context.Context, tx *sql.Tx, userID string) error {
	rows, err := tx.QueryContext(ctx, `SELECT n.id, n.data FROM notifications n WHERE n.kind = $1 AND n.collapse_key IN
		(SELECT 'conversation:' || x.conversation_id FROM messages x WHERE x.sender_id = $2)`, notify.KindMessage, userID)
	if err != nil {
		return fmt.Errorf("store: redact notifications: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id, data string
		if err := rows.Scan(&id, &data); err != nil {
			rows.Close()
			return fmt.Errorf("store: redact notifications: %w", err)
		}
		var d map[string]string
		if json.Unmarshal([]byte(data), &d) == nil && d["message_id"] != "" {
			ids = append(ids, id+"\x00"+d["message_id"])
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: redact notifications: %w", err)
	}
	for _, pair := range ids {
		id, msgID, _ := strings.Cut(pair, "\x00")
		if _, err := tx.ExecContext(ctx, `UPDATE notifications SET body = '', title = $3 WHERE id = $1
			AND EXISTS (SELECT 1 FROM messages WHERE id = $2 AND sender_id = $4)`, id, msgID, erasedMessageTitle, userID); err != nil {
			return fmt.Errorf("store: redact notifications: %w", err)
		}
	}
	return redactStream(ctx, tx, true, `message_id IN (SELECT id FROM messages WHERE sender_id = $1)`, userID)
}
