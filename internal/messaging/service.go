package messaging

import (
	"context"
	"slices"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/ids"
)

// Service is the messaging domain.
type Service struct {
	store Store
	clock clock.Clock
}

// NewService returns the messaging domain over st.
func NewService(st Store, c clock.Clock) *Service { return &Service{store: st, clock: c} }

func errNoConversation(id string) error { return apperr.NotFoundf("no conversation %q", id) }

// Create starts a conversation. Without a title it is direct: exactly one
// other person, and the pair's existing conversation is answered (created
// false) if there is one. With a title it is a group of the creator (its
// first admin) and the others.
func (s *Service) Create(ctx context.Context, creatorID string, memberIDs []string, title *string) (*Conversation, bool, error) {
	if err := checkUserIDs("member_ids", memberIDs); err != nil {
		return nil, false, err
	}
	var others []string
	for _, id := range memberIDs {
		if id != creatorID && !slices.Contains(others, id) {
			others = append(others, id)
		}
	}
	now := s.clock.Now()
	c := &Conversation{ID: ids.New(ids.Conversation), CreatorID: creatorID, ActivityAt: now, CreatedAt: now, UpdatedAt: now}
	if title == nil {
		if len(others) != 1 {
			return nil, false, apperr.InvalidParam("member_ids", "direct_needs_one", "a conversation without a title is direct: member_ids names exactly one other person (give a title for a group)")
		}
		c.Kind = Direct
	} else {
		t, err := cleanTitle(*title)
		if err != nil {
			return nil, false, err
		}
		if len(others) == 0 {
			return nil, false, apperr.InvalidParam("member_ids", "validation_failed", "a group needs at least one other member")
		}
		if len(others)+1 > MaxMembers {
			return nil, false, apperr.InvalidParam("member_ids", "too_many", "a group has at most %d members, you included", MaxMembers)
		}
		c.Kind, c.Title = Group, t
	}
	if bad, err := s.store.CheckPeople(ctx, creatorID, others); err != nil {
		return nil, false, err
	} else if bad != "" {
		return nil, false, apperr.InvalidParam("member_ids", "unknown_user", "no user %q you can message", bad)
	}
	members := []*MemberState{{UserID: creatorID, Role: Admin, JoinedAt: now}}
	for _, id := range others {
		members = append(members, &MemberState{UserID: id, Role: Member, JoinedAt: now})
	}
	if c.Kind == Direct {
		members[0].Role = Member
	}
	var out *Conversation
	var created bool
	err := s.store.CreateConversation(ctx, c, members, func(l Locked, isNew bool) error {
		out, created = l.Conversation(), isNew
		if !isNew {
			return nil
		}
		return l.Stream(ctx, others, StreamUpdated, updateOf(out, "created", creatorID, others), now)
	})
	if err != nil {
		return nil, false, err
	}
	got, err := s.store.Conversation(ctx, out.ID, creatorID)
	return got, created, err
}

// OpenEventConversation answers a sports event's group conversation,
// creating it on first use (created true). Its members are the event's
// creator and the people going, and follow them.
func (s *Service) OpenEventConversation(ctx context.Context, eventID, callerID string) (*Conversation, bool, error) {
	now := s.clock.Now()
	draft := &Conversation{ID: ids.New(ids.Conversation), ActivityAt: now, CreatedAt: now, UpdatedAt: now}
	var id string
	var created bool
	err := s.store.EventConversation(ctx, eventID, callerID, draft, func(l Locked, isNew bool) error {
		id, created = l.Conversation().ID, isNew
		if !isNew {
			return nil
		}
		return announce(ctx, l, updateOf(l.Conversation(), "created", callerID, nil), now)
	})
	if err != nil {
		return nil, false, err
	}
	c, err := s.store.Conversation(ctx, id, callerID)
	return c, created, err
}

// errFollowsEvent refuses to change the members of an event's
// conversation by hand.
func errFollowsEvent() error {
	return apperr.Conflictf("event_conversation", "", "an event's conversation has the event's creator and the people going: its members change with their answers")
}

// Update is data of conversation.updated stream entries.
type Update struct {
	ConversationID string   `json:"conversation_id"`
	Change         string   `json:"change" enum:"created,renamed,members_added,member_removed,member_left,role_changed"`
	ByUserID       string   `json:"by_user_id"`
	UserIDs        []string `json:"user_ids,omitempty"`
	Title          string   `json:"title,omitempty"`
}

func updateOf(c *Conversation, change, by string, users []string) Update {
	return Update{ConversationID: c.ID, Change: change, ByUserID: by, UserIDs: users, Title: c.Title}
}

// Get reads a conversation for one of its members.
func (s *Service) Get(ctx context.Context, id, viewerID string) (*Conversation, error) {
	return s.store.Conversation(ctx, id, viewerID)
}

// List pages the viewer's conversations by latest activity; limit+1 are
// read, the extra one says there is more.
func (s *Service) List(ctx context.Context, viewerID string, after *ActivityCursor, limit int) ([]*Conversation, error) {
	return s.store.Conversations(ctx, viewerID, after, limit+1)
}

// changeGroup runs fn on a group the caller administers.
func (s *Service) changeGroup(ctx context.Context, id, callerID string, fn func(l Locked, now time.Time) error) error {
	return s.store.WithConversation(ctx, id, callerID, func(l Locked) error {
		if l.Conversation().Kind != Group {
			return apperr.Conflictf("not_a_group", "", "only a group conversation can be changed this way")
		}
		me, err := l.Member(ctx, callerID)
		if err != nil {
			return err
		}
		if me.Role != Admin {
			return apperr.Forbiddenf("not_admin", "only an admin of the group may do this")
		}
		return fn(l, s.clock.Now())
	})
}

// announce streams a conversation change to its current members and to
// the extra people (those who just left it).
func announce(ctx context.Context, l Locked, u Update, now time.Time, extra ...string) error {
	ms, err := l.Members(ctx)
	if err != nil {
		return err
	}
	to := slices.Clone(extra)
	for _, m := range ms {
		to = append(to, m.UserID)
	}
	return l.Stream(ctx, to, StreamUpdated, u, now)
}

// Rename changes a group's title (admins).
func (s *Service) Rename(ctx context.Context, id, callerID, title string) (*Conversation, error) {
	t, err := cleanTitle(title)
	if err != nil {
		return nil, err
	}
	err = s.changeGroup(ctx, id, callerID, func(l Locked, now time.Time) error {
		c := l.Conversation()
		if c.Title == t {
			return nil
		}
		c.Title, c.UpdatedAt = t, now
		if err := l.Save(ctx); err != nil {
			return err
		}
		return announce(ctx, l, updateOf(c, "renamed", callerID, nil), now)
	})
	if err != nil {
		return nil, err
	}
	return s.store.Conversation(ctx, id, callerID)
}

// AddMembers adds people to a group (admins). People already in it are
// left as they are.
func (s *Service) AddMembers(ctx context.Context, id, callerID string, userIDs []string) (*Conversation, error) {
	if len(userIDs) == 0 {
		return nil, apperr.InvalidParam("user_ids", "validation_failed", "user_ids must name at least one person")
	}
	if err := checkUserIDs("user_ids", userIDs); err != nil {
		return nil, err
	}
	if bad, err := s.store.CheckPeople(ctx, callerID, userIDs); err != nil {
		return nil, err
	} else if bad != "" {
		return nil, apperr.InvalidParam("user_ids", "unknown_user", "no user %q you can message", bad)
	}
	err := s.changeGroup(ctx, id, callerID, func(l Locked, now time.Time) error {
		if l.Conversation().EventID != "" {
			return errFollowsEvent()
		}
		ms, err := l.Members(ctx)
		if err != nil {
			return err
		}
		var added []string
		for _, u := range userIDs {
			if slices.ContainsFunc(ms, func(m *MemberState) bool { return m.UserID == u }) || slices.Contains(added, u) {
				continue
			}
			added = append(added, u)
		}
		if len(added) == 0 {
			return nil
		}
		if len(ms)+len(added) > MaxMembers {
			return apperr.InvalidParam("user_ids", "too_many", "a group has at most %d members", MaxMembers)
		}
		c := l.Conversation()
		for _, u := range added {
			// A newcomer reads the history, but none of it counts as unread.
			if err := l.PutMember(ctx, &MemberState{UserID: u, Role: Member, JoinedAt: now, ReadSeq: c.LastSeq}); err != nil {
				return err
			}
		}
		c.UpdatedAt = now
		if err := l.Save(ctx); err != nil {
			return err
		}
		return announce(ctx, l, updateOf(c, "members_added", callerID, added), now)
	})
	if err != nil {
		return nil, err
	}
	return s.store.Conversation(ctx, id, callerID)
}

// RemoveMember takes someone out of a group (admins; anyone for
// themselves, which is leaving).
func (s *Service) RemoveMember(ctx context.Context, id, callerID, userID string) error {
	if userID == callerID {
		return s.Leave(ctx, id, callerID)
	}
	return s.changeGroup(ctx, id, callerID, func(l Locked, now time.Time) error {
		if l.Conversation().EventID != "" {
			return errFollowsEvent()
		}
		m, err := l.Member(ctx, userID)
		if err != nil {
			return err
		}
		if m == nil {
			return apperr.NotFoundf("%q is not a member of this conversation", userID)
		}
		if err := l.EndMember(ctx, userID, now); err != nil {
			return err
		}
		return announce(ctx, l, updateOf(l.Conversation(), "member_removed", callerID, []string{userID}), now, userID)
	})
}

// SetRole makes a member an admin or a plain member (admins). A group
// keeps at least one admin.
func (s *Service) SetRole(ctx context.Context, id, callerID, userID, role string) (*MemberState, error) {
	if role != Admin && role != Member {
		return nil, apperr.InvalidParam("role", "invalid_role", "role is admin or member")
	}
	var out *MemberState
	err := s.changeGroup(ctx, id, callerID, func(l Locked, now time.Time) error {
		ms, err := l.Members(ctx)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(ms, func(m *MemberState) bool { return m.UserID == userID })
		if i < 0 {
			return apperr.NotFoundf("%q is not a member of this conversation", userID)
		}
		out = ms[i]
		if out.Role == role {
			return nil
		}
		if role == Member && countAdmins(ms) == 1 {
			return apperr.Conflictf("last_admin", "role", "a group keeps at least one admin: make someone else admin first")
		}
		if err := l.SetRole(ctx, userID, role); err != nil {
			return err
		}
		out.Role = role
		return announce(ctx, l, updateOf(l.Conversation(), "role_changed", callerID, []string{userID}), now)
	})
	return out, err
}

func countAdmins(ms []*MemberState) int {
	n := 0
	for _, m := range ms {
		if m.Role == Admin {
			n++
		}
	}
	return n
}

// Leave takes the caller out of a group. When the last admin leaves, the
// longest-standing member becomes admin, so a group is never left without
// one.
func (s *Service) Leave(ctx context.Context, id, callerID string) error {
	return s.store.WithConversation(ctx, id, callerID, func(l Locked) error {
		if l.Conversation().Kind != Group {
			return apperr.Conflictf("not_a_group", "", "a direct conversation cannot be left; mute it instead")
		}
		if l.Conversation().EventID != "" {
			return errFollowsEvent()
		}
		now := s.clock.Now()
		if err := l.EndMember(ctx, callerID, now); err != nil {
			return err
		}
		if err := promoteIfNoAdmin(ctx, l); err != nil {
			return err
		}
		return announce(ctx, l, updateOf(l.Conversation(), "member_left", callerID, []string{callerID}), now, callerID)
	})
}

func promoteIfNoAdmin(ctx context.Context, l Locked) error {
	ms, err := l.Members(ctx)
	if err != nil || len(ms) == 0 || countAdmins(ms) > 0 {
		return err
	}
	return l.SetRole(ctx, ms[0].UserID, Admin)
}

// Mute silences the conversation's notifications for the caller until a
// time (they stay in the notification centre, without push or email);
// nil unmutes.
func (s *Service) Mute(ctx context.Context, id, callerID string, until *time.Time) (*MemberState, error) {
	now := s.clock.Now()
	if until != nil && !until.After(now) {
		return nil, apperr.InvalidParam("until", "validation_failed", "until must be in the future")
	}
	var out *MemberState
	err := s.store.WithConversation(ctx, id, callerID, func(l Locked) error {
		if err := l.SetMute(ctx, callerID, until); err != nil {
			return err
		}
		m, err := l.Member(ctx, callerID)
		out = m
		return err
	})
	return out, err
}
