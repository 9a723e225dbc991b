package messaging

import (
	"context"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// Send posts a message. replyTo puts it in the thread of that message (in
// the thread's root, when replyTo is itself a reply: threads are one level
// deep). The message, its message.sent event, the members' stream entries
// and their notifications commit together.
func (s *Service) Send(ctx context.Context, convID, senderID, body, replyTo string) (*Message, error) {
	body, err := cleanBody("body", body)
	if err != nil {
		return nil, err
	}
	var m *Message
	err = s.store.WithConversation(ctx, convID, senderID, func(l Locked) error {
		c := l.Conversation()
		if c.Kind == Direct {
			ms, err := l.Members(ctx)
			if err != nil {
				return err
			}
			for _, o := range ms {
				if o.UserID == senderID {
					continue
				}
				if blocked, err := l.Blocked(ctx, senderID, o.UserID); err != nil {
					return err
				} else if blocked {
					return apperr.Forbiddenf("conversation_blocked", "you cannot message this person")
				}
			}
		}
		now := s.clock.Now()
		m = &Message{ID: ids.New(ids.Message), ConversationID: c.ID, SenderID: senderID, Body: body, CreatedAt: now}
		if replyTo != "" {
			root, err := s.threadRoot(ctx, l, senderID, replyTo)
			if err != nil {
				return err
			}
			m.ThreadID = root.ID
			if err := l.AddReply(ctx, root.ID, now); err != nil {
				return err
			}
		}
		c.LastSeq++
		m.Seq, c.ActivityAt = c.LastSeq, now
		if err := l.Save(ctx); err != nil {
			return err
		}
		if err := l.InsertMessage(ctx, m); err != nil {
			return err
		}
		// Senders have read what they wrote.
		if err := l.SetRead(ctx, senderID, m, now); err != nil {
			return err
		}
		readers, err := l.Readers(ctx, senderID)
		if err != nil {
			return err
		}
		if err := s.notifyNew(ctx, l, m, readers, now); err != nil {
			return err
		}
		ev, err := outbox.New(now, outbox.MessageSent, senderID, "message", payloadOf(m))
		if err != nil {
			return err
		}
		ev.Audience = readers
		if err := l.Record(ctx, &ev); err != nil {
			return err
		}
		return l.Stream(ctx, readers, StreamSent, map[string]any{"message": ViewOf(m)}, now)
	})
	return m, err
}

// threadRoot finds the root of the thread a reply to id belongs to: id
// itself, or its own root when id is a reply.
func (s *Service) threadRoot(ctx context.Context, l Locked, senderID, id string) (*Message, error) {
	bad := apperr.InvalidParam("reply_to", "unknown_message", "reply_to is not a message of this conversation")
	target, err := l.Message(ctx, id)
	if apperr.IsKind(err, apperr.NotFound) {
		return nil, bad
	}
	if err != nil {
		return nil, err
	}
	if blocked, err := l.Blocked(ctx, senderID, target.SenderID); err != nil {
		return nil, err
	} else if blocked && target.SenderID != senderID {
		return nil, bad
	}
	if target.ThreadID == "" {
		return target, nil
	}
	return l.Message(ctx, target.ThreadID)
}

// notifyNew tells the other readers of a new message: one notification per
// conversation while unread (it collapses), quoting the start of the body.
func (s *Service) notifyNew(ctx context.Context, l Locked, m *Message, readers []string, now time.Time) error {
	name, err := l.DisplayName(ctx, m.SenderID)
	if err != nil {
		return err
	}
	c := l.Conversation()
	title := name + " sent you a message"
	if c.Kind == Group {
		title = name + " in " + c.Title
	}
	body := m.Body
	if utf8.RuneCountInString(body) > 140 {
		body = string([]rune(body)[:139]) + "…"
	}
	ns := make([]*notify.Notification, 0, len(readers))
	for _, u := range readers {
		if u == m.SenderID {
			continue
		}
		n := notify.New(now, u, notify.KindMessage, title, body, map[string]string{"conversation_id": c.ID, "message_id": m.ID})
		n.CollapseKey = "conversation:" + c.ID
		ns = append(ns, n)
	}
	return l.NotifyAll(ctx, ns)
}

// Edit changes the body of the caller's own message; edited_at records it.
func (s *Service) Edit(ctx context.Context, id, callerID, body string) (*Message, error) {
	body, err := cleanBody("body", body)
	if err != nil {
		return nil, err
	}
	var out *Message
	err = s.store.WithMessage(ctx, id, callerID, func(l Locked, m *Message) error {
		if m.SenderID != callerID {
			return apperr.Forbiddenf("not_sender", "only the sender of a message may edit or delete it")
		}
		if m.Deleted() {
			return apperr.Conflictf("message_deleted", "", "the message was deleted")
		}
		out = m
		if m.Body == body {
			return nil
		}
		now := s.clock.Now()
		m.Body, m.EditedAt = body, &now
		if err := l.UpdateMessage(ctx, m); err != nil {
			return err
		}
		readers, err := l.Readers(ctx, callerID)
		if err != nil {
			return err
		}
		return l.Stream(ctx, readers, StreamEdited, map[string]any{"message": ViewOf(m)}, now)
	})
	return out, err
}

// Delete turns the caller's own message into a tombstone: its place in
// the conversation and its thread stay, its body goes. Deleting a
// tombstone changes nothing.
func (s *Service) Delete(ctx context.Context, id, callerID string) error {
	return s.store.WithMessage(ctx, id, callerID, func(l Locked, m *Message) error {
		if m.SenderID != callerID {
			return apperr.Forbiddenf("not_sender", "only the sender of a message may edit or delete it")
		}
		if m.Deleted() {
			return nil
		}
		now := s.clock.Now()
		m.Body, m.DeletedAt = "", &now
		if err := l.UpdateMessage(ctx, m); err != nil {
			return err
		}
		readers, err := l.Readers(ctx, callerID)
		if err != nil {
			return err
		}
		return l.Stream(ctx, readers, StreamDeleted, map[string]any{"message": ViewOf(m)}, now)
	})
}

// Get reads one message the caller may read.
func (s *Service) Message(ctx context.Context, id, callerID string) (*Message, error) {
	return s.store.Message(ctx, id, callerID)
}

// Page is a page of messages in the order asked, and where the next one
// starts.
type Page struct {
	Messages   []*Message
	HasMore    bool
	NextCursor string // pass as before (pages read backwards) or after (forwards)
}

// History pages a conversation's top-level messages. Without a cursor it
// starts at the newest (desc, the default) or the oldest (asc); before and
// after page from a message, in either order. Messages are numbered in
// commit order, so a page read after another never misses one nor repeats
// one, however many arrive meanwhile.
func (s *Service) History(ctx context.Context, convID, callerID, before, after string, asc bool, limit int) (*Page, error) {
	if _, err := s.store.Membership(ctx, convID, callerID); err != nil {
		return nil, err
	}
	q := &HistoryQuery{ConversationID: convID, ViewerID: callerID, Forward: asc, Limit: limit + 1}
	switch {
	case before != "" && after != "":
		return nil, apperr.InvalidParam("after", "invalid_cursor", "send before or after, not both")
	case before != "" || after != "":
		param, id := "before", before
		if after != "" {
			param, id = "after", after
		}
		m, err := s.store.Message(ctx, id, callerID)
		if apperr.IsKind(err, apperr.NotFound) || (err == nil && m.ConversationID != convID) {
			return nil, apperr.InvalidParam(param, "invalid_cursor", "%s is not a message of this conversation", param)
		}
		if err != nil {
			return nil, err
		}
		q.From, q.Forward = m.Seq, after != ""
	}
	ms, err := s.store.History(ctx, q)
	if err != nil {
		return nil, err
	}
	return pageOf(ms, limit, q.Forward != asc), nil
}

// pageOf cuts the extra message off and puts the page in the order asked
// (reverse: it was read the other way).
func pageOf(ms []*Message, limit int, reverse bool) *Page {
	p := &Page{}
	if len(ms) > limit {
		ms, p.HasMore = ms[:limit], true
	}
	if p.HasMore {
		p.NextCursor = ms[len(ms)-1].ID
	}
	if reverse {
		slices.Reverse(ms)
	}
	p.Messages = ms
	return p
}

// Thread pages a thread oldest first: its root, then the replies after the
// cursor (a reply's id). id may be the root or any reply.
func (s *Service) Thread(ctx context.Context, id, callerID, after string, limit int) (*Page, error) {
	m, err := s.store.Message(ctx, id, callerID)
	if err != nil {
		return nil, err
	}
	root := m.ID
	if m.ThreadID != "" {
		root = m.ThreadID
	}
	q := &HistoryQuery{ConversationID: m.ConversationID, ViewerID: callerID, Thread: root, Forward: true, Limit: limit + 1}
	if after != "" {
		a, err := s.store.Message(ctx, after, callerID)
		if apperr.IsKind(err, apperr.NotFound) || (err == nil && a.ID != root && a.ThreadID != root) {
			return nil, apperr.InvalidParam("after", "invalid_cursor", "after is not a message of this thread")
		}
		if err != nil {
			return nil, err
		}
		q.From = a.Seq
	}
	ms, err := s.store.History(ctx, q)
	if err != nil {
		return nil, err
	}
	return pageOf(ms, limit, false), nil
}

// MarkRead moves the caller's read marker forward to a message (never
// back: an older message changes nothing) and tells the members who may
// read that message.
func (s *Service) MarkRead(ctx context.Context, convID, callerID, messageID string) (*MemberState, error) {
	var out *MemberState
	err := s.store.WithConversation(ctx, convID, callerID, func(l Locked) error {
		m, err := l.Message(ctx, messageID)
		if apperr.IsKind(err, apperr.NotFound) {
			return apperr.InvalidParam("message_id", "unknown_message", "message_id is not a message of this conversation")
		}
		if err != nil {
			return err
		}
		if blocked, err := l.Blocked(ctx, callerID, m.SenderID); err != nil {
			return err
		} else if blocked && m.SenderID != callerID {
			return apperr.InvalidParam("message_id", "unknown_message", "message_id is not a message of this conversation")
		}
		if out, err = l.Member(ctx, callerID); err != nil || m.Seq <= out.ReadSeq {
			return err
		}
		now := s.clock.Now()
		if err := l.SetRead(ctx, callerID, m, now); err != nil {
			return err
		}
		out.ReadSeq, out.ReadMessageID, out.ReadAt = m.Seq, m.ID, &now
		readers, err := l.Readers(ctx, m.SenderID)
		if err != nil {
			return err
		}
		var audience []string
		for _, r := range readers {
			if blocked, err := l.Blocked(ctx, r, callerID); err != nil {
				return err
			} else if !blocked || r == callerID {
				audience = append(audience, r)
			}
		}
		p := payloadOf(m)
		// A receipt is filed under the reader, so it must not carry the
		// sender's text: erasing the sender could not find it there.
		p.Text, p.ReadBy, p.ReadAt = "", callerID, wire.OptTime(&now)
		ev, err := outbox.New(now, outbox.MessageRead, callerID, "message", p)
		if err != nil {
			return err
		}
		ev.Audience = audience
		if err := l.Record(ctx, &ev); err != nil {
			return err
		}
		return l.Stream(ctx, audience, StreamRead, ReadState{ConversationID: convID, UserID: callerID, MessageID: m.ID, ReadAt: wire.Time(now)}, now)
	})
	return out, err
}

// Typing tells the other members, on their streams, that the caller is
// typing. Nothing is stored but the stream entries.
func (s *Service) Typing(ctx context.Context, convID, callerID string) error {
	return s.store.WithConversation(ctx, convID, callerID, func(l Locked) error {
		readers, err := l.Readers(ctx, callerID)
		if err != nil {
			return err
		}
		others := slices.DeleteFunc(readers, func(u string) bool { return u == callerID })
		now := s.clock.Now()
		return l.Stream(ctx, others, StreamTyping, map[string]string{"conversation_id": convID, "user_id": callerID, "at": wire.Time(now)}, now)
	})
}

// SearchParams is a search as the caller asks it.
type SearchParams struct {
	Q              string
	ConversationID string
	From, To       *time.Time
	Cursor         string // an offset this search handed out
	Limit          int
}

// Results is a page of search results.
type Results struct {
	Items      []Found
	HasMore    bool
	NextCursor string
}

// Search finds messages of the caller's current conversations, best match
// first.
func (s *Service) Search(ctx context.Context, callerID string, p SearchParams) (*Results, error) {
	terms, err := Terms(p.Q)
	if err != nil {
		return nil, err
	}
	if p.From != nil && p.To != nil && !p.To.After(*p.From) {
		return nil, apperr.InvalidParam("to", "invalid_date_range", "to must be after from")
	}
	offset := 0
	if p.Cursor != "" {
		offset, err = strconv.Atoi(p.Cursor)
		if err != nil || offset <= 0 || offset > MaxSearchOffset {
			return nil, apperr.InvalidParam("cursor", "invalid_cursor", "cursor is not one this search returned")
		}
	}
	if p.ConversationID != "" {
		if _, err := s.store.Membership(ctx, p.ConversationID, callerID); err != nil {
			return nil, err
		}
	}
	found, err := s.store.Search(ctx, &SearchQuery{ViewerID: callerID, Terms: terms, ConversationID: p.ConversationID,
		From: p.From, To: p.To, Offset: offset, Limit: p.Limit + 1})
	if err != nil {
		return nil, err
	}
	r := &Results{Items: found}
	if len(found) > p.Limit {
		r.Items, r.HasMore = found[:p.Limit], true
		if next := offset + p.Limit; next <= MaxSearchOffset {
			r.NextCursor = strconv.Itoa(next)
		} else {
			r.HasMore = false
		}
	}
	return r, nil
}
