package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/messaging"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
)

// Messaging implements messaging.Store.
type Messaging struct{ db *DB }

// NewMessaging returns the messaging store over db.
func NewMessaging(db *DB) *Messaging { return &Messaging{db: db} }

var _ messaging.Store = (*Messaging)(nil)

const conversationColumns = `c.id, c.kind, c.title, c.creator_id, COALESCE(c.event_id, ''), c.last_seq, c.activity_at, c.created_at, c.updated_at`

func scanConversation(row scanner, extra ...any) (*messaging.Conversation, error) {
	var c messaging.Conversation
	var activity, created, updated int64
	if err := row.Scan(append([]any{&c.ID, &c.Kind, &c.Title, &c.CreatorID, &c.EventID, &c.LastSeq, &activity, &created, &updated}, extra...)...); err != nil {
		return nil, err
	}
	c.ActivityAt, c.CreatedAt, c.UpdatedAt = fromMicros(activity), fromMicros(created), fromMicros(updated)
	return &c, nil
}

const memberColumns = `cm.conversation_id, cm.user_id, cm.role, cm.joined_at, cm.left_at, cm.muted_until, cm.read_seq, COALESCE(cm.read_message_id, ''), cm.read_at`

func scanMember(row scanner, extra ...any) (*messaging.MemberState, error) {
	var m messaging.MemberState
	var joined int64
	var left, muted, read sql.NullInt64
	if err := row.Scan(append([]any{&m.ConversationID, &m.UserID, &m.Role, &joined, &left, &muted, &m.ReadSeq, &m.ReadMessageID, &read}, extra...)...); err != nil {
		return nil, err
	}
	m.JoinedAt, m.LeftAt, m.MutedUntil, m.ReadAt = fromMicros(joined), fromNullMicros(left), fromNullMicros(muted), fromNullMicros(read)
	return &m, nil
}

const messageColumns = `m.id, m.conversation_id, m.conv_seq, m.sender_id, COALESCE(m.thread_id, ''), m.reply_count, m.last_reply_at,
	m.body, m.created_at, m.edited_at, m.deleted_at, m.sender_erased, m.moderation`

func scanMessage(row scanner, extra ...any) (*messaging.Message, error) {
	var m messaging.Message
	var created int64
	var lastReply, edited, deleted sql.NullInt64
	if err := row.Scan(append([]any{&m.ID, &m.ConversationID, &m.Seq, &m.SenderID, &m.ThreadID, &m.ReplyCount, &lastReply,
		&m.Body, &created, &edited, &deleted, &m.SenderErased, &m.Moderation}, extra...)...); err != nil {
		return nil, err
	}
	m.CreatedAt, m.LastReplyAt, m.EditedAt, m.DeletedAt = fromMicros(created), fromNullMicros(lastReply), fromNullMicros(edited), fromNullMicros(deleted)
	return &m, nil
}

// CreateConversation inserts c and its members, or finds the pair's direct
// conversation, and runs fn under its lock.
func (s *Messaging) CreateConversation(ctx context.Context, c *messaging.Conversation, members []*messaging.MemberState,
	fn func(l messaging.Locked, created bool) error) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		var directKey sql.NullString
		if c.Kind == messaging.Direct && len(members) == 2 {
			directKey = sql.NullString{String: pairKey(members[0].UserID, members[1].UserID), Valid: true}
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO conversations (id, kind, title, creator_id, direct_key, event_id, last_seq, activity_at, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $8, $9) ON CONFLICT DO NOTHING`,
			c.ID, c.Kind, c.Title, c.CreatorID, directKey, nullString(c.EventID), micros(c.ActivityAt), micros(c.CreatedAt), micros(c.UpdatedAt))
		if err != nil {
			return fmt.Errorf("store: create conversation: %w", err)
		}
		n, _ := res.RowsAffected()
		if n == 0 {
			if !directKey.Valid {
				return fmt.Errorf("store: create conversation: %s exists", c.ID)
			}
			existing, err := scanConversation(tx.QueryRowContext(ctx, `SELECT `+conversationColumns+` FROM conversations c WHERE c.direct_key = $1`+s.db.forUpdate(), directKey.String))
			if err != nil {
				return fmt.Errorf("store: find direct conversation: %w", err)
			}
			l := &lockedConversation{tx: tx, c: existing}
			// The pair's conversation comes back to whichever of them had
			// been taken out of it (an erased account never comes back:
			// it cannot be named).
			for _, m := range members {
				if cur, err := l.Member(ctx, m.UserID); err != nil {
					return err
				} else if cur == nil {
					m.ReadSeq = existing.LastSeq
					if err := l.PutMember(ctx, m); err != nil {
						return err
					}
				}
			}
			return fn(l, false)
		}
		l := &lockedConversation{tx: tx, c: c}
		for _, m := range members {
			if err := l.PutMember(ctx, m); err != nil {
				return err
			}
		}
		return fn(l, true)
	})
}

// WithConversation runs fn under the conversation's lock, for a member.
func (s *Messaging) WithConversation(ctx context.Context, id, userID string, fn func(l messaging.Locked) error) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		l, err := s.lock(ctx, tx, id, userID)
		if err != nil {
			return err
		}
		return fn(l)
	})
}

// lock takes the row lock of conversation id (SQLite: the writer's lock
// is already held) and checks that userID is a member, in one statement.
func (s *Messaging) lock(ctx context.Context, tx *sql.Tx, id, userID string) (*lockedConversation, error) {
	var member bool
	c, err := scanConversation(tx.QueryRowContext(ctx, `SELECT `+conversationColumns+`,
		EXISTS (SELECT 1 FROM conversation_members cm WHERE cm.conversation_id = c.id AND cm.user_id = $2 AND cm.left_at IS NULL)
		FROM conversations c WHERE c.id = $1`+s.db.forUpdate(), id, userID), &member)
	if errors.Is(err, sql.ErrNoRows) || err == nil && !member {
		return nil, apperr.NotFoundf("no conversation %q", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: lock conversation: %w", err)
	}
	return &lockedConversation{tx: tx, c: c}, nil
}

// WithMessage runs fn under the lock of the conversation of a message the
// user may read.
func (s *Messaging) WithMessage(ctx context.Context, messageID, userID string, fn func(l messaging.Locked, m *messaging.Message) error) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		var convID string
		err := tx.QueryRowContext(ctx, `SELECT conversation_id FROM messages WHERE id = $1`, messageID).Scan(&convID)
		if errors.Is(err, sql.ErrNoRows) {
			return apperr.NotFoundf("no message %q", messageID)
		}
		if err != nil {
			return fmt.Errorf("store: find message: %w", err)
		}
		l, err := s.lock(ctx, tx, convID, userID)
		if apperr.IsKind(err, apperr.NotFound) {
			return apperr.NotFoundf("no message %q", messageID)
		}
		if err != nil {
			return err
		}
		m, err := l.Message(ctx, messageID)
		if err != nil {
			return err
		}
		if m.SenderID != userID {
			if blocked, err := l.Blocked(ctx, userID, m.SenderID); err != nil {
				return err
			} else if blocked {
				return apperr.NotFoundf("no message %q", messageID)
			}
		}
		return fn(l, m)
	})
}

// lockedConversation is a conversation locked for the rest of tx.
type lockedConversation struct {
	tx *sql.Tx
	c  *messaging.Conversation
}

func (l *lockedConversation) Conversation() *messaging.Conversation { return l.c }

func (l *lockedConversation) Save(ctx context.Context) error {
	_, err := l.tx.ExecContext(ctx, `UPDATE conversations SET title = $2, last_seq = $3, activity_at = $4, updated_at = $5 WHERE id = $1`,
		l.c.ID, l.c.Title, l.c.LastSeq, micros(l.c.ActivityAt), micros(l.c.UpdatedAt))
	if err != nil {
		return fmt.Errorf("store: save conversation: %w", err)
	}
	return nil
}

func (l *lockedConversation) Member(ctx context.Context, userID string) (*messaging.MemberState, error) {
	m, err := scanMember(l.tx.QueryRowContext(ctx, `SELECT `+memberColumns+` FROM conversation_members cm
		WHERE cm.conversation_id = $1 AND cm.user_id = $2 AND cm.left_at IS NULL`, l.c.ID, userID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: read member: %w", err)
	}
	return m, nil
}

func (l *lockedConversation) Members(ctx context.Context) ([]*messaging.MemberState, error) {
	return queryMembers(ctx, l.tx, l.c.ID)
}

func queryMembers(ctx context.Context, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, convID string) ([]*messaging.MemberState, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+memberColumns+` FROM conversation_members cm
		WHERE cm.conversation_id = $1 AND cm.left_at IS NULL ORDER BY cm.joined_at, cm.user_id`, convID)
	if err != nil {
		return nil, fmt.Errorf("store: list members: %w", err)
	}
	defer rows.Close()
	var out []*messaging.MemberState
	for rows.Next() {
		m, err := scanMember(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list members: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

func (l *lockedConversation) PutMember(ctx context.Context, m *messaging.MemberState) error {
	_, err := l.tx.ExecContext(ctx, `INSERT INTO conversation_members (conversation_id, user_id, role, joined_at, read_seq)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (conversation_id, user_id) DO UPDATE SET role = excluded.role, joined_at = excluded.joined_at, left_at = NULL,
			muted_until = NULL, read_seq = excluded.read_seq, read_message_id = NULL, read_at = NULL`,
		l.c.ID, m.UserID, m.Role, micros(m.JoinedAt), m.ReadSeq)
	if err != nil {
		return fmt.Errorf("store: add member: %w", err)
	}
	return nil
}

func (l *lockedConversation) SetRole(ctx context.Context, userID, role string) error {
	if _, err := l.tx.ExecContext(ctx, `UPDATE conversation_members SET role = $3 WHERE conversation_id = $1 AND user_id = $2`, l.c.ID, userID, role); err != nil {
		return fmt.Errorf("store: set role: %w", err)
	}
	return nil
}

func (l *lockedConversation) EndMember(ctx context.Context, userID string, at time.Time) error {
	if _, err := l.tx.ExecContext(ctx, `UPDATE conversation_members SET left_at = $3, role = 'member', muted_until = NULL
		WHERE conversation_id = $1 AND user_id = $2 AND left_at IS NULL`, l.c.ID, userID, micros(at)); err != nil {
		return fmt.Errorf("store: end membership: %w", err)
	}
	return nil
}

func (l *lockedConversation) SetMute(ctx context.Context, userID string, until *time.Time) error {
	if _, err := l.tx.ExecContext(ctx, `UPDATE conversation_members SET muted_until = $3 WHERE conversation_id = $1 AND user_id = $2`,
		l.c.ID, userID, nullMicros(until)); err != nil {
		return fmt.Errorf("store: mute: %w", err)
	}
	return nil
}

func (l *lockedConversation) SetRead(ctx context.Context, userID string, m *messaging.Message, at time.Time) error {
	if _, err := l.tx.ExecContext(ctx, `UPDATE conversation_members SET read_seq = $3, read_message_id = $4, read_at = $5
		WHERE conversation_id = $1 AND user_id = $2 AND read_seq < $3`, l.c.ID, userID, m.Seq, m.ID, micros(at)); err != nil {
		return fmt.Errorf("store: set read marker: %w", err)
	}
	return nil
}

func (l *lockedConversation) Message(ctx context.Context, id string) (*messaging.Message, error) {
	m, err := scanMessage(l.tx.QueryRowContext(ctx, `SELECT `+messageColumns+` FROM messages m WHERE m.id = $1 AND m.conversation_id = $2`, id, l.c.ID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.NotFoundf("no message %q", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: read message: %w", err)
	}
	return m, nil
}

func (l *lockedConversation) InsertMessage(ctx context.Context, m *messaging.Message) error {
	res, err := l.tx.ExecContext(ctx, `INSERT INTO messages (id, conversation_id, conv_seq, sender_id, thread_id, body, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, m.ID, m.ConversationID, m.Seq, m.SenderID, nullString(m.ThreadID), m.Body, micros(m.CreatedAt))
	if err != nil {
		return fmt.Errorf("store: insert message: %w", err)
	}
	// SQLite: its terms go into the full-text index with the others of the
	// batch (pending.go). (PostgreSQL's are a column of the row.)
	if p := pendingOf(l.tx); !p.postgres && m.Body != "" {
		seq, err := res.LastInsertId()
		if err != nil {
			return fmt.Errorf("store: insert message: %w", err)
		}
		p.terms.add(heldTerms{seq: seq, conversationID: m.ConversationID, body: m.Body})
	}
	return nil
}

func (l *lockedConversation) UpdateMessage(ctx context.Context, m *messaging.Message) error {
	// The index's trigger replaces the message's terms: they must be there
	// (a message sent in the same batch holds them until its end).
	if err := flushPending(ctx, l.tx); err != nil {
		return err
	}
	_, err := l.tx.ExecContext(ctx, `UPDATE messages SET body = $2, edited_at = $3, deleted_at = $4 WHERE id = $1`,
		m.ID, m.Body, nullMicros(m.EditedAt), nullMicros(m.DeletedAt))
	if err != nil {
		return fmt.Errorf("store: update message: %w", err)
	}
	if m.Deleted() {
		return redactMessage(ctx, l.tx, m.ConversationID, m.ID)
	}
	return nil
}

func (l *lockedConversation) AddReply(ctx context.Context, rootID string, at time.Time) error {
	if _, err := l.tx.ExecContext(ctx, `UPDATE messages SET reply_count = reply_count + 1, last_reply_at = $2 WHERE id = $1`, rootID, micros(at)); err != nil {
		return fmt.Errorf("store: count reply: %w", err)
	}
	return nil
}

func (l *lockedConversation) Readers(ctx context.Context, userID string) ([]string, error) {
	out, err := queryStrings(ctx, l.tx, `SELECT cm.user_id FROM conversation_members cm
		WHERE cm.conversation_id = $1 AND cm.left_at IS NULL AND (cm.user_id = $2 OR `+notBlocked("cm.user_id", "$2")+`)
		ORDER BY cm.user_id`, l.c.ID, userID)
	if err != nil {
		return nil, fmt.Errorf("store: list readers: %w", err)
	}
	return out, nil
}

func (l *lockedConversation) Blocked(ctx context.Context, a, b string) (bool, error) {
	return blockedEitherWay(ctx, l.tx, a, b)
}

func (l *lockedConversation) DisplayName(ctx context.Context, userID string) (string, error) {
	var first, username string
	if err := l.tx.QueryRowContext(ctx, `SELECT first_name, username FROM users WHERE id = $1`, userID).Scan(&first, &username); err != nil {
		return "", fmt.Errorf("store: read name: %w", err)
	}
	if strings.TrimSpace(first) != "" {
		return first, nil
	}
	return username, nil
}

func (l *lockedConversation) Record(ctx context.Context, ev *outbox.Event) error {
	return appendEvent(ctx, l.tx, ev)
}

func (l *lockedConversation) Stream(ctx context.Context, userIDs []string, kind string, data any, at time.Time) error {
	return appendStream(ctx, l.tx, userIDs, kind, data, at)
}

// NotifyAll holds the notifications of a new message until the work of
// its transaction ends (pending.go): a batch of sends writes all of theirs
// at once.
func (l *lockedConversation) NotifyAll(ctx context.Context, ns []*notify.Notification) error {
	pendingOf(l.tx).notes.add(ns...)
	return nil
}

// CheckPeople returns the first id that is not a live account the viewer
// may reach.
func (s *Messaging) CheckPeople(ctx context.Context, viewerID string, ids []string) (string, error) {
	for _, id := range ids {
		var ok bool
		err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM users u WHERE u.id = $1 AND u.deleted_at IS NULL
			AND u.role <> 'system' AND `+notBlocked("u.id", "$2")+`)`, id, viewerID).Scan(&ok)
		if err != nil {
			return "", fmt.Errorf("store: check people: %w", err)
		}
		if !ok {
			return id, nil
		}
	}
	return "", nil
}

func init() {
	// An erased account's messages become tombstones ("deleted user"),
	// keeping their place in conversations and threads; its memberships
	// end and its read markers and mutes go.
	registerEraser("messages", []string{"sender_id"}, func(ctx context.Context, tx *sql.Tx, e erasure) error {
		if err := flushPending(ctx, tx); err != nil { // terms held for the index's trigger, notifications to redact
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE messages SET body = '', deleted_at = COALESCE(deleted_at, $2), sender_erased = TRUE
			WHERE sender_id = $1`, e.UserID, micros(e.At))
		return err
	})
	registerEraser("conversation_members", []string{"user_id"}, func(ctx context.Context, tx *sql.Tx, e erasure) error {
		led, err := queryStrings(ctx, tx, `SELECT conversation_id FROM conversation_members WHERE user_id = $1 AND role = $2
			AND left_at IS NULL ORDER BY conversation_id`, e.UserID, messaging.Admin)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE conversation_members SET left_at = COALESCE(left_at, $2), role = 'member', muted_until = NULL,
			read_seq = 0, read_message_id = NULL, read_at = NULL WHERE user_id = $1`, e.UserID, micros(e.At)); err != nil {
			return err
		}
		for _, id := range led {
			if err := promoteIfNoAdmin(ctx, tx, id); err != nil {
				return err
			}
		}
		return nil
	})
	keepColumn("conversations", "creator_id", "names the anonymised account row only; a group outlives its creator")
	registerMuteChecks(conversationsMuted)
}

// conversationsMuted keeps new-message notifications out of push and
// email while their recipients mute the conversation: one query per
// conversation (and time) among ns, for all of its recipients.
func conversationsMuted(ctx context.Context, tx *sql.Tx, ns []*notify.Notification) ([]bool, error) {
	muted := make([]bool, len(ns))
	type group struct {
		conv string
		at   int64
	}
	groups := map[group][]int{}
	var order []group
	for i, n := range ns {
		if convID := n.Data["conversation_id"]; n.Kind == notify.KindMessage && convID != "" {
			g := group{convID, micros(n.UpdatedAt)}
			if groups[g] == nil {
				order = append(order, g)
			}
			groups[g] = append(groups[g], i)
		}
	}
	for _, g := range order {
		args := []any{g.conv, g.at}
		for _, i := range groups[g] {
			args = append(args, ns[i].UserID)
		}
		who, err := queryStrings(ctx, tx, `SELECT user_id FROM conversation_members WHERE conversation_id = $1 AND muted_until > $2
			AND user_id IN (`+placeholders(3, len(args)-2)+`)`, args...)
		if err != nil {
			return nil, err
		}
		for _, i := range groups[g] {
			muted[i] = slices.Contains(who, ns[i].UserID)
		}
	}
	return muted, nil
}

// promoteIfNoAdmin makes the longest-standing member of a conversation left
// without an admin its admin, as leaving does (messaging.promoteIfNoAdmin)
// when the admin's membership ends otherwise: erasure, or an event's
// conversation following its attendees.
func promoteIfNoAdmin(ctx context.Context, tx *sql.Tx, convID string) error {
	if _, err := tx.ExecContext(ctx, `UPDATE conversation_members SET role = $2 WHERE conversation_id = $1
		AND user_id = (SELECT user_id FROM conversation_members WHERE conversation_id = $1 AND left_at IS NULL ORDER BY joined_at, user_id LIMIT 1)
		AND NOT EXISTS (SELECT 1 FROM conversation_members WHERE conversation_id = $1 AND left_at IS NULL AND role = $2)`,
		convID, messaging.Admin); err != nil {
		return fmt.Errorf("store: promote an admin: %w", err)
	}
	return nil
}
