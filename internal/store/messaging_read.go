package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/messaging"
)

// mayRead is true when the viewer (a SQL expression) may read message x:
// their own, or from someone neither blocks.
func mayRead(viewer, x string) string {
	return `(` + x + `.sender_id = ` + viewer + ` OR ` + notBlocked(viewer, x+`.sender_id`) + `)`
}

// viewerColumns are what a member sees of a conversation besides its row:
// their membership, their unread count (others' messages after their
// marker, not deleted, from people they may read) and the id of the last
// message they may read.
var viewerColumns = memberColumns + `,
	(SELECT COUNT(*) FROM messages x WHERE x.conversation_id = c.id AND x.conv_seq > cm.read_seq AND x.sender_id <> cm.user_id
		AND x.deleted_at IS NULL AND ` + notBlocked("cm.user_id", "x.sender_id") + `),
	COALESCE((SELECT x.id FROM messages x WHERE x.conversation_id = c.id AND ` + mayRead("cm.user_id", "x") + `
		ORDER BY x.conv_seq DESC LIMIT 1), '')`

// scanViewed reads a conversation row followed by viewerColumns.
func scanViewed(row scanner) (c *messaging.Conversation, lastID string, err error) {
	var me *messaging.MemberState
	var unread int
	c, err = scanConversation(scannerFunc(func(convDest ...any) error {
		var err error
		me, err = scanMember(scannerFunc(func(memDest ...any) error {
			return row.Scan(append(append(convDest, memDest...), &unread, &lastID)...)
		}))
		return err
	}))
	if err != nil {
		return nil, "", err
	}
	c.Me, c.Unread = me, unread
	return c, lastID, nil
}

// Conversation reads a conversation for one of its members.
func (s *Messaging) Conversation(ctx context.Context, id, viewerID string) (*messaging.Conversation, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+conversationColumns+`, `+viewerColumns+`
		FROM conversations c JOIN conversation_members cm ON cm.conversation_id = c.id AND cm.user_id = $2 AND cm.left_at IS NULL
		WHERE c.id = $1`, id, viewerID)
	if err != nil {
		return nil, fmt.Errorf("store: get conversation: %w", err)
	}
	cs, err := s.viewed(ctx, rows)
	if err != nil {
		return nil, err
	}
	if len(cs) == 0 {
		return nil, apperr.NotFoundf("no conversation %q", id)
	}
	return cs[0], nil
}

// Conversations lists the viewer's conversations by latest activity.
func (s *Messaging) Conversations(ctx context.Context, viewerID string, after *messaging.ActivityCursor, limit int) ([]*messaging.Conversation, error) {
	args := []any{viewerID, limit}
	page := ``
	if after != nil {
		args = append(args, micros(after.At), after.ID)
		page = ` AND (c.activity_at < $3 OR (c.activity_at = $3 AND c.id < $4))`
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+conversationColumns+`, `+viewerColumns+`
		FROM conversation_members cm JOIN conversations c ON c.id = cm.conversation_id
		WHERE cm.user_id = $1 AND cm.left_at IS NULL`+page+`
		ORDER BY c.activity_at DESC, c.id DESC LIMIT $2`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list conversations: %w", err)
	}
	return s.viewed(ctx, rows)
}

// viewed reads conversations with their viewer's columns, then their
// members and last messages.
func (s *Messaging) viewed(ctx context.Context, rows *sql.Rows) ([]*messaging.Conversation, error) {
	var out []*messaging.Conversation
	last := map[string]*messaging.Conversation{}
	err := func() error {
		defer rows.Close()
		for rows.Next() {
			c, lastID, err := scanViewed(rows)
			if err != nil {
				return fmt.Errorf("store: read conversation: %w", err)
			}
			if lastID != "" {
				last[lastID] = c
			}
			out = append(out, c)
		}
		return rows.Err()
	}()
	if err != nil {
		return nil, err
	}
	for _, c := range out {
		if c.Members, err = queryMembers(ctx, s.db, c.ID); err != nil {
			return nil, err
		}
	}
	if len(last) == 0 {
		return out, nil
	}
	var marks []string
	var args []any
	for id := range last {
		args = append(args, id)
		marks = append(marks, fmt.Sprintf("$%d", len(args)))
	}
	ms, err := s.messages(ctx, `SELECT `+messageColumns+` FROM messages m WHERE m.id IN (`+strings.Join(marks, ", ")+`)`, args...)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		last[m.ID].LastMessage = m
	}
	return out, nil
}

func (s *Messaging) messages(ctx context.Context, query string, args ...any) ([]*messaging.Message, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: read messages: %w", err)
	}
	defer rows.Close()
	var out []*messaging.Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, fmt.Errorf("store: read messages: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// Membership returns a current member's state.
func (s *Messaging) Membership(ctx context.Context, id, userID string) (*messaging.MemberState, error) {
	m, err := scanMember(s.db.QueryRowContext(ctx, `SELECT `+memberColumns+` FROM conversation_members cm
		WHERE cm.conversation_id = $1 AND cm.user_id = $2 AND cm.left_at IS NULL`, id, userID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.NotFoundf("no conversation %q", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: read membership: %w", err)
	}
	return m, nil
}

// viewedMessageColumns are messageColumns with a thread root's reply
// count and last reply time as the viewer (a SQL expression) sees the
// thread: without the replies of people either of them blocks.
func viewedMessageColumns(viewer string) string {
	replies := `FROM messages r WHERE r.thread_id = m.id AND ` + mayRead(viewer, "r")
	return strings.Replace(messageColumns, `m.reply_count, m.last_reply_at`,
		`CASE WHEN m.reply_count = 0 THEN 0 ELSE (SELECT COUNT(*) `+replies+`) END,
		CASE WHEN m.reply_count = 0 THEN NULL ELSE (SELECT MAX(r.created_at) `+replies+`) END`, 1)
}

// Message reads a message the viewer may read.
func (s *Messaging) Message(ctx context.Context, id, viewerID string) (*messaging.Message, error) {
	ms, err := s.messages(ctx, `SELECT `+viewedMessageColumns("$2")+` FROM messages m
		JOIN conversation_members cm ON cm.conversation_id = m.conversation_id AND cm.user_id = $2 AND cm.left_at IS NULL
		WHERE m.id = $1 AND `+mayRead("$2", "m"), id, viewerID)
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, apperr.NotFoundf("no message %q", id)
	}
	return ms[0], nil
}

// History lists a page of a conversation's top-level messages, or of a
// thread, that the viewer may read.
func (s *Messaging) History(ctx context.Context, q *messaging.HistoryQuery) ([]*messaging.Message, error) {
	args := []any{q.ConversationID, q.ViewerID, q.Limit}
	where := `m.conversation_id = $1 AND ` + mayRead("$2", "m")
	if q.Thread != "" {
		args = append(args, q.Thread)
		where += ` AND (m.id = $4 OR m.thread_id = $4)`
	} else {
		where += ` AND m.thread_id IS NULL`
	}
	order := ` ORDER BY m.conv_seq DESC`
	if q.Forward {
		args = append(args, q.From)
		where += fmt.Sprintf(` AND m.conv_seq > $%d`, len(args))
		order = ` ORDER BY m.conv_seq`
	} else if q.From > 0 {
		args = append(args, q.From)
		where += fmt.Sprintf(` AND m.conv_seq < $%d`, len(args))
	}
	return s.messages(ctx, `SELECT `+viewedMessageColumns("$2")+` FROM messages m WHERE `+where+order+` LIMIT $3`, args...)
}
