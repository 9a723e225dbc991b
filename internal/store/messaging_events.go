package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/messaging"
)

// A sports event's conversation has its creator (admin) and the people
// going as members, and nobody else: every save of the event brings the
// membership in line with its RSVPs, in the same transaction.

// eventPeople lists the event's creator and the people going to it, but
// no erased account: an erased creator is not brought back as admin.
func eventPeople(ctx context.Context, tx *sql.Tx, eventID, creatorID string) ([]string, error) {
	going, err := queryStrings(ctx, tx, `SELECT r.user_id FROM event_rsvps r JOIN users u ON u.id = r.user_id
		WHERE r.event_id = $1 AND r.status = 'going' AND u.deleted_at IS NULL ORDER BY r.going_since, r.user_id`, eventID)
	if err != nil {
		return nil, fmt.Errorf("store: event conversation: %w", err)
	}
	var live bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE id = $1 AND deleted_at IS NULL)`, creatorID).Scan(&live); err != nil {
		return nil, fmt.Errorf("store: event conversation: %w", err)
	}
	if live && !slices.Contains(going, creatorID) {
		going = append([]string{creatorID}, going...)
	}
	return going, nil
}

// retitleEventConversations gives the conversations of an erased
// creator's events the events' blanked titles: the title they copied is
// the creator's writing.
func retitleEventConversations(ctx context.Context, tx *sql.Tx, creatorID string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE conversations SET title = (SELECT e.title FROM events e WHERE e.id = conversations.event_id), updated_at = $2
		WHERE event_id IN (SELECT id FROM events WHERE creator_id = $1)`, creatorID, micros(at))
	if err != nil {
		return fmt.Errorf("store: retitle event conversations: %w", err)
	}
	return nil
}

// followEvent updates the event's conversation, if it has one, to its
// creator and the people going.
func followEvent(ctx context.Context, tx *sql.Tx, eventID, creatorID string, at time.Time) error {
	c, err := scanConversation(tx.QueryRowContext(ctx, `SELECT `+conversationColumns+` FROM conversations c WHERE c.event_id = $1`, eventID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: event conversation: %w", err)
	}
	want, err := eventPeople(ctx, tx, eventID, creatorID)
	if err != nil {
		return err
	}
	l := &lockedConversation{tx: tx, c: c}
	ms, err := l.Members(ctx)
	if err != nil {
		return err
	}
	var added, removed []string
	for _, m := range ms {
		if !slices.Contains(want, m.UserID) {
			if err := l.EndMember(ctx, m.UserID, at); err != nil {
				return err
			}
			removed = append(removed, m.UserID)
		}
	}
	for _, u := range want {
		if slices.ContainsFunc(ms, func(m *messaging.MemberState) bool { return m.UserID == u }) {
			continue
		}
		role := messaging.Member
		if u == creatorID {
			role = messaging.Admin
		}
		if err := l.PutMember(ctx, &messaging.MemberState{UserID: u, Role: role, JoinedAt: at, ReadSeq: c.LastSeq}); err != nil {
			return err
		}
		added = append(added, u)
	}
	if len(added) == 0 && len(removed) == 0 {
		return nil
	}
	if err := promoteIfNoAdmin(ctx, tx, c.ID); err != nil {
		return err
	}
	if err := appendStream(ctx, tx, want, messaging.StreamUpdated, messaging.Update{ConversationID: c.ID, Change: "members_added",
		ByUserID: creatorID, UserIDs: added, Title: c.Title}, at); err != nil || len(removed) == 0 {
		return err
	}
	return appendStream(ctx, tx, append(want, removed...), messaging.StreamUpdated, messaging.Update{ConversationID: c.ID,
		Change: "member_removed", ByUserID: creatorID, UserIDs: removed, Title: c.Title}, at)
}

// EventConversation opens the event's conversation for its creator or
// someone going: the existing one, or c made with the event's title.
func (s *Messaging) EventConversation(ctx context.Context, eventID, callerID string, c *messaging.Conversation,
	fn func(l messaging.Locked, created bool) error) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		var creatorID, title string
		// The lock an RSVP takes, so the members read here stay true.
		err := tx.QueryRowContext(ctx, `UPDATE events SET updated_at = updated_at WHERE id = $1 RETURNING creator_id, title`, eventID).Scan(&creatorID, &title)
		if errors.Is(err, sql.ErrNoRows) {
			return apperr.NotFoundf("no event %q", eventID)
		}
		if err != nil {
			return fmt.Errorf("store: event conversation: %w", err)
		}
		// Only someone who may see the event learns that it exists.
		a := &sqlArgs{}
		q := `SELECT EXISTS (SELECT 1 FROM events e WHERE e.id = ` + a.add(eventID) + ` AND ` + visibleTo(a, callerID) + `)`
		var visible bool
		if err := tx.QueryRowContext(ctx, q, a.list...).Scan(&visible); err != nil {
			return fmt.Errorf("store: event conversation: %w", err)
		}
		if !visible {
			return apperr.NotFoundf("no event %q", eventID)
		}
		people, err := eventPeople(ctx, tx, eventID, creatorID)
		if err != nil {
			return err
		}
		if !slices.Contains(people, callerID) {
			return apperr.Forbiddenf("not_going", "only the event's creator and the people going are in its conversation")
		}
		existing, err := scanConversation(tx.QueryRowContext(ctx, `SELECT `+conversationColumns+` FROM conversations c WHERE c.event_id = $1`, eventID))
		if err == nil {
			return fn(&lockedConversation{tx: tx, c: existing}, false)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: event conversation: %w", err)
		}
		if r := []rune(title); len(r) > messaging.MaxTitle {
			title = string(r[:messaging.MaxTitle])
		}
		c.Kind, c.Title, c.CreatorID, c.EventID = messaging.Group, title, creatorID, eventID
		if _, err := tx.ExecContext(ctx, `INSERT INTO conversations (id, kind, title, creator_id, event_id, last_seq, activity_at, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, 0, $6, $7, $8)`, c.ID, c.Kind, c.Title, c.CreatorID, c.EventID, micros(c.ActivityAt), micros(c.CreatedAt), micros(c.UpdatedAt)); err != nil {
			return fmt.Errorf("store: event conversation: %w", err)
		}
		l := &lockedConversation{tx: tx, c: c}
		for _, u := range people {
			role := messaging.Member
			if u == creatorID {
				role = messaging.Admin
			}
			if err := l.PutMember(ctx, &messaging.MemberState{UserID: u, Role: role, JoinedAt: c.CreatedAt}); err != nil {
				return err
			}
		}
		return fn(l, true)
	})
}
