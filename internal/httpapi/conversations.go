package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/messaging"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// Conversation is a conversation as one of its members sees it.
type Conversation struct {
	Object      string               `json:"object" enum:"conversation"`
	ID          string               `json:"id" example:"cnv_068b2k3n1ytkbrg5q9v7x8m0ch"`
	Type        string               `json:"type" enum:"direct,group"`
	Title       *string              `json:"title" doc:"A group's title; null for a direct conversation"`
	CreatorID   string               `json:"creator_id"`
	EventID     *string              `json:"event_id" doc:"The sports event this is the conversation of; null otherwise"`
	Members     []ConversationMember `json:"members"`
	UnreadCount int                  `json:"unread_count" doc:"Messages from others after your read marker"`
	LastMessage *messaging.View      `json:"last_message" doc:"The latest message you may read; null before the first"`
	Me          ConversationMember   `json:"me" doc:"Your membership: role, read marker, mute"`
	CreatedAt   string               `json:"created_at" format:"date-time"`
	UpdatedAt   string               `json:"updated_at" format:"date-time"`
	ActivityAt  string               `json:"last_activity_at" format:"date-time" doc:"The last message, or the creation"`
}

// ConversationMember is a member and how far they have read.
type ConversationMember struct {
	UserID            string  `json:"user_id"`
	Role              string  `json:"role" enum:"admin,member"`
	JoinedAt          string  `json:"joined_at" format:"date-time"`
	LastReadMessageID *string `json:"last_read_message_id" doc:"Read up to this message"`
	LastReadAt        *string `json:"last_read_at" format:"date-time"`
	MutedUntil        *string `json:"muted_until,omitempty" format:"date-time" doc:"Only in me: notifications stay in the centre without push or email until then"`
}

func memberOf(m *messaging.MemberState, me bool) ConversationMember {
	out := ConversationMember{UserID: m.UserID, Role: m.Role, JoinedAt: wire.Time(m.JoinedAt), LastReadAt: wire.OptTime(m.ReadAt)}
	if m.ReadMessageID != "" {
		id := m.ReadMessageID
		out.LastReadMessageID = &id
	}
	if me {
		out.MutedUntil = wire.OptTime(m.MutedUntil)
	}
	return out
}

func conversationOf(c *messaging.Conversation) Conversation {
	out := Conversation{Object: "conversation", ID: c.ID, Type: c.Kind, CreatorID: c.CreatorID, UnreadCount: c.Unread,
		CreatedAt: wire.Time(c.CreatedAt), UpdatedAt: wire.Time(c.UpdatedAt), ActivityAt: wire.Time(c.ActivityAt),
		Members: make([]ConversationMember, 0, len(c.Members))}
	if c.Kind == messaging.Group {
		t := c.Title
		out.Title = &t
	}
	if c.EventID != "" {
		e := c.EventID
		out.EventID = &e
	}
	for _, m := range c.Members {
		out.Members = append(out.Members, memberOf(m, false))
	}
	if c.Me != nil {
		out.Me = memberOf(c.Me, true)
	}
	if c.LastMessage != nil {
		v := messaging.ViewOf(c.LastMessage)
		out.LastMessage = &v
	}
	return out
}

// ConversationDraft is the body of POST /v1/conversations.
type ConversationDraft struct {
	MemberIDs []string `json:"member_ids" minItems:"1" maxItems:"99" doc:"The other people (you are added). Without a title: exactly one, a direct conversation"`
	Title     *string  `json:"title,omitempty" maxLength:"100" doc:"Makes a group of you and member_ids (1 to 100 characters)"`
}

// ConversationPath is the path of operations on one conversation.
type ConversationPath struct {
	ID string `path:"id" maxLength:"64" example:"cnv_068b2k3n1ytkbrg5q9v7x8m0ch"`
}

type conversationOut struct{ Body Conversation }

// conversationCursor is a position in the list by activity:
// "<microseconds>.<id>".
func parseConversationCursor(c string) (*messaging.ActivityCursor, error) {
	if c == "" {
		return nil, nil
	}
	us, id, ok := strings.Cut(c, ".")
	n, err := strconv.ParseInt(us, 10, 64)
	if !ok || err != nil || !validCursor("cnv_", id) || id == "" {
		return nil, apperr.InvalidParam("cursor", "invalid_cursor", "cursor is not one this list returned")
	}
	return &messaging.ActivityCursor{At: time.UnixMicro(n).UTC(), ID: id}, nil
}

func (s *server) registerConversations() {
	tags := []string{"Messaging"}
	huma.Register(s.api, huma.Operation{
		OperationID: "create-conversation", Method: http.MethodPost, Path: "/v1/conversations", Tags: tags,
		Summary: "Start a conversation",
		Description: "Without a title: a direct conversation with the one person in member_ids; the same two people always get the same " +
			"conversation (200 with the existing one, 201 when new). With a title: a group of you (its first admin) and member_ids, " +
			"up to 100 people. Everyone named must be an account you can reach (not blocking you, nor blocked by you). Scope: write.",
		Security:      requires(auth.ScopeWrite),
		DefaultStatus: http.StatusCreated,
	}, func(ctx context.Context, in *struct{ Body ConversationDraft }) (*conversationOpened, error) {
		c, created, err := s.messaging.Create(ctx, principalOf(ctx).UserID, in.Body.MemberIDs, in.Body.Title)
		return opened(c, created, err)
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "open-event-conversation", Method: http.MethodPost, Path: "/v1/events/{id}/conversation", Tags: tags,
		Summary: "Open a sports event's conversation",
		Description: "The event's group conversation, made on first use (201; 200 after): its creator (admin) and the people going, " +
			"who join and leave it as they answer. Only they may open it (403 not_going). Its members are not changed by hand " +
			"(409 event_conversation). Scope: write.",
		Security:      requires(auth.ScopeWrite),
		DefaultStatus: http.StatusCreated,
	}, func(ctx context.Context, in *EventPath) (*conversationOpened, error) {
		c, created, err := s.messaging.OpenEventConversation(ctx, in.ID, principalOf(ctx).UserID)
		return opened(c, created, err)
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "list-conversations", Method: http.MethodGet, Path: "/v1/conversations", Tags: tags,
		Summary:     "Your conversations",
		Description: "Most recent activity first, with your unread count and the last message of each. Scope: read.",
		Security:    requires(auth.ScopeRead),
	}, func(ctx context.Context, in *struct{ ListParams }) (*struct{ Body List[Conversation] }, error) {
		after, err := parseConversationCursor(in.Cursor)
		if err != nil {
			return nil, err
		}
		cs, err := s.messaging.List(ctx, principalOf(ctx).UserID, after, in.Limit)
		if err != nil {
			return nil, err
		}
		cursor := func(c *messaging.Conversation) string {
			return strconv.FormatInt(c.ActivityAt.UnixMicro(), 10) + "." + c.ID
		}
		return &struct{ Body List[Conversation] }{Body: listOf(cs, in.Limit, cursor, conversationOf)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "get-conversation", Method: http.MethodGet, Path: "/v1/conversations/{id}", Tags: tags,
		Summary:     "A conversation",
		Description: "404 to anyone who is not a member. Members' read markers show who read up to where. Scope: read.",
		Security:    requires(auth.ScopeRead),
	}, func(ctx context.Context, in *ConversationPath) (*conversationOut, error) {
		c, err := s.messaging.Get(ctx, in.ID, principalOf(ctx).UserID)
		if err != nil {
			return nil, err
		}
		return &conversationOut{Body: conversationOf(c)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "rename-conversation", Method: http.MethodPatch, Path: "/v1/conversations/{id}", Tags: tags,
		Summary:     "Rename a group",
		Description: "Admins of a group change its title. Scope: write.",
		Security:    requires(auth.ScopeWrite),
	}, func(ctx context.Context, in *struct {
		ConversationPath
		Body struct {
			Title string `json:"title" maxLength:"100"`
		}
	}) (*conversationOut, error) {
		c, err := s.messaging.Rename(ctx, in.ID, principalOf(ctx).UserID, in.Body.Title)
		if err != nil {
			return nil, err
		}
		return &conversationOut{Body: conversationOf(c)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "add-conversation-members", Method: http.MethodPost, Path: "/v1/conversations/{id}/members", Tags: tags,
		Summary: "Add people to a group",
		Description: "Admins add people (up to 100 members in all). Newcomers read the history, none of it unread. " +
			"People already in the group are left as they are. Scope: write.",
		Security: requires(auth.ScopeWrite),
	}, func(ctx context.Context, in *struct {
		ConversationPath
		Body struct {
			UserIDs []string `json:"user_ids" minItems:"1" maxItems:"99"`
		}
	}) (*conversationOut, error) {
		c, err := s.messaging.AddMembers(ctx, in.ID, principalOf(ctx).UserID, in.Body.UserIDs)
		if err != nil {
			return nil, err
		}
		return &conversationOut{Body: conversationOf(c)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "remove-conversation-member", Method: http.MethodDelete, Path: "/v1/conversations/{id}/members/{user_id}", Tags: tags,
		Summary: "Remove someone from a group",
		Description: "Admins remove members; anyone removes themselves (leaving). The person removed no longer sees the conversation, " +
			"nor finds its messages in search. Scope: write.",
		Security:      requires(auth.ScopeWrite),
		DefaultStatus: http.StatusNoContent,
	}, func(ctx context.Context, in *struct {
		ConversationPath
		UserID string `path:"user_id" maxLength:"64"`
	}) (*struct{}, error) {
		return nil, s.messaging.RemoveMember(ctx, in.ID, principalOf(ctx).UserID, in.UserID)
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "set-conversation-member-role", Method: http.MethodPatch, Path: "/v1/conversations/{id}/members/{user_id}", Tags: tags,
		Summary:     "Make a member admin, or not",
		Description: "Admins change a member's role; a group keeps at least one admin (409 last_admin). Scope: write.",
		Security:    requires(auth.ScopeWrite),
	}, func(ctx context.Context, in *struct {
		ConversationPath
		UserID string `path:"user_id" maxLength:"64"`
		Body   struct {
			Role string `json:"role" enum:"admin,member"`
		}
	}) (*struct{ Body ConversationMember }, error) {
		m, err := s.messaging.SetRole(ctx, in.ID, principalOf(ctx).UserID, in.UserID, in.Body.Role)
		if err != nil {
			return nil, err
		}
		return &struct{ Body ConversationMember }{Body: memberOf(m, false)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "leave-conversation", Method: http.MethodPost, Path: "/v1/conversations/{id}/leave", Tags: tags,
		Summary: "Leave a group",
		Description: "You no longer see the group nor find its messages in search. When its last admin leaves, the longest-standing " +
			"member becomes admin. A direct conversation cannot be left (409 not_a_group): mute it. Scope: write.",
		Security:      requires(auth.ScopeWrite),
		DefaultStatus: http.StatusNoContent,
	}, func(ctx context.Context, in *ConversationPath) (*struct{}, error) {
		return nil, s.messaging.Leave(ctx, in.ID, principalOf(ctx).UserID)
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "mute-conversation", Method: http.MethodPut, Path: "/v1/conversations/{id}/mute", Tags: tags,
		Summary: "Mute a conversation until a time",
		Description: "Until then its new messages reach your notification centre without push or email. " +
			"DELETE unmutes. Scope: write.",
		Security: requires(auth.ScopeWrite),
	}, func(ctx context.Context, in *struct {
		ConversationPath
		Body struct {
			Until time.Time `json:"until" doc:"In the future"`
		}
	}) (*struct{ Body ConversationMember }, error) {
		m, err := s.messaging.Mute(ctx, in.ID, principalOf(ctx).UserID, &in.Body.Until)
		if err != nil {
			return nil, err
		}
		return &struct{ Body ConversationMember }{Body: memberOf(m, true)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "unmute-conversation", Method: http.MethodDelete, Path: "/v1/conversations/{id}/mute", Tags: tags,
		Summary:     "Unmute a conversation",
		Description: "Scope: write.",
		Security:    requires(auth.ScopeWrite),
	}, func(ctx context.Context, in *ConversationPath) (*struct{ Body ConversationMember }, error) {
		m, err := s.messaging.Mute(ctx, in.ID, principalOf(ctx).UserID, nil)
		if err != nil {
			return nil, err
		}
		return &struct{ Body ConversationMember }{Body: memberOf(m, true)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "read-conversation", Method: http.MethodPost, Path: "/v1/conversations/{id}/read", Tags: tags,
		Summary: "Mark read up to a message",
		Description: "Moves your read marker forward to message_id (an older message changes nothing). Members see it in the " +
			"conversation's members; your unread count follows. Records message.read. Scope: write.",
		Security: requires(auth.ScopeWrite),
	}, func(ctx context.Context, in *struct {
		ConversationPath
		Body struct {
			MessageID string `json:"message_id" maxLength:"64"`
		}
	}) (*struct{ Body ConversationMember }, error) {
		m, err := s.messaging.MarkRead(ctx, in.ID, principalOf(ctx).UserID, in.Body.MessageID)
		if err != nil {
			return nil, err
		}
		return &struct{ Body ConversationMember }{Body: memberOf(m, true)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "typing", Method: http.MethodPost, Path: "/v1/conversations/{id}/typing", Tags: tags,
		Summary:       "Say you are typing",
		Description:   "The other members' real-time streams get conversation.typing. Send it again every few seconds while typing. Scope: write.",
		Security:      requires(auth.ScopeWrite),
		DefaultStatus: http.StatusNoContent,
	}, func(ctx context.Context, in *ConversationPath) (*struct{}, error) {
		return nil, s.messaging.Typing(ctx, in.ID, principalOf(ctx).UserID)
	})
}

// conversationOpened answers a request that finds or makes a conversation:
// 201 with its Location when it was made, 200 when it already existed.
type conversationOpened struct {
	Status   int
	Location string `header:"Location"`
	Body     Conversation
}

func opened(c *messaging.Conversation, created bool, err error) (*conversationOpened, error) {
	if err != nil {
		return nil, err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return &conversationOpened{Status: status, Location: "/v1/conversations/" + c.ID, Body: conversationOf(c)}, nil
}
