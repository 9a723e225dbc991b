package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/messaging"
)

// MessagePath is the path of operations on one message.
type MessagePath struct {
	ID string `path:"id" maxLength:"64" example:"msg_068b2k3n1ytkbrg5q9v7x8m0cg"`
}

// MessageDraft is the body of a new message.
type MessageDraft struct {
	Body    string `json:"body" maxLength:"16000" example:"See you at 10?" doc:"1 to 4,000 characters after trimming"`
	ReplyTo string `json:"reply_to,omitempty" maxLength:"64" doc:"A message of the conversation: the new one joins its thread (threads are one level deep: a reply to a reply joins the same thread)"`
}

// MessageList is a page of messages.
type MessageList = List[messaging.View]

// SearchResult is one message found.
type SearchResult struct {
	Object         string         `json:"object" enum:"search_result"`
	Message        messaging.View `json:"message"`
	ConversationID string         `json:"conversation_id"`
	Snippet        string         `json:"snippet" example:"See you at the <mark>court</mark> at 10?" doc:"HTML-escaped text around the match, the matched words in <mark>"`
}

func pageList(p *messaging.Page) MessageList {
	out := MessageList{Object: "list", Data: make([]messaging.View, 0, len(p.Messages)), HasMore: p.HasMore, NextCursor: p.NextCursor}
	for _, m := range p.Messages {
		out.Data = append(out.Data, messaging.ViewOf(m))
	}
	return out
}

func checkMessageCursor(param, c string) error {
	if !validCursor("msg_", c) {
		return apperr.InvalidParam(param, "invalid_cursor", "%s is not a message id", param)
	}
	return nil
}

func (s *server) registerMessages() {
	tags := []string{"Messaging"}
	huma.Register(s.api, huma.Operation{
		OperationID: "send-message", Method: http.MethodPost, Path: "/v1/conversations/{id}/messages", Tags: tags,
		Summary: "Send a message",
		Description: "Members send; everyone else gets 404. In a direct conversation, a block either way refuses it (403 conversation_blocked); " +
			"in a group, people who block each other do not see each other's messages. Send Idempotency-Key so a retry never sends twice. " +
			"Records message.sent. Scope: write.",
		Security:      requires(auth.ScopeWrite),
		DefaultStatus: http.StatusCreated,
	}, func(ctx context.Context, in *struct {
		ConversationPath
		Body MessageDraft
	}) (*struct {
		Location string `header:"Location"`
		Body     messaging.View
	}, error) {
		if in.Body.ReplyTo != "" && !validCursor("msg_", in.Body.ReplyTo) {
			return nil, apperr.InvalidParam("reply_to", "unknown_message", "reply_to is not a message of this conversation")
		}
		v, err := s.screenedSend(ctx, in.ID, principalOf(ctx).UserID, in.Body.Body, in.Body.ReplyTo)
		if err != nil {
			return nil, err
		}
		return &struct {
			Location string `header:"Location"`
			Body     messaging.View
		}{Location: "/v1/messages/" + v.ID, Body: v}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "list-messages", Method: http.MethodGet, Path: "/v1/conversations/{id}/messages", Tags: tags,
		Summary: "A conversation's messages",
		Description: "Top-level messages (replies are in their thread; see reply_count), newest first unless order=asc. " +
			"before and after page from a message, in either order; next_cursor continues in the same direction (pass it as the " +
			"same parameter; without one, as before for desc and after for asc). Pages never miss nor repeat a message while " +
			"new ones arrive. Scope: read.",
		Security: requires(auth.ScopeRead),
	}, func(ctx context.Context, in *struct {
		ConversationPath
		Limit  int    `query:"limit" minimum:"1" maximum:"100" default:"20"`
		Order  string `query:"order" enum:"asc,desc" default:"desc"`
		Before string `query:"before" maxLength:"64" doc:"A message id: older than it"`
		After  string `query:"after" maxLength:"64" doc:"A message id: newer than it"`
	}) (*struct{ Body MessageList }, error) {
		if err := checkMessageCursor("before", in.Before); err != nil {
			return nil, err
		}
		if err := checkMessageCursor("after", in.After); err != nil {
			return nil, err
		}
		p, err := s.messaging.History(ctx, in.ID, principalOf(ctx).UserID, in.Before, in.After, in.Order == "asc", in.Limit)
		if err != nil {
			return nil, err
		}
		return &struct{ Body MessageList }{Body: pageList(p)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "get-message", Method: http.MethodGet, Path: "/v1/messages/{id}", Tags: tags,
		Summary:     "A message",
		Description: "404 unless you are a member of its conversation. Scope: read.",
		Security:    requires(auth.ScopeRead),
	}, func(ctx context.Context, in *MessagePath) (*struct{ Body messaging.View }, error) {
		m, err := s.messaging.Message(ctx, in.ID, principalOf(ctx).UserID)
		if err != nil {
			return nil, err
		}
		return &struct{ Body messaging.View }{Body: messaging.ViewOf(m)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "edit-message", Method: http.MethodPatch, Path: "/v1/messages/{id}", Tags: tags,
		Summary:     "Edit your message",
		Description: "Only its sender (403 not_sender); edited_at records the last edit. A deleted message cannot be edited (409). Scope: write.",
		Security:    requires(auth.ScopeWrite),
	}, func(ctx context.Context, in *struct {
		MessagePath
		Body struct {
			Body string `json:"body" maxLength:"16000" doc:"1 to 4,000 characters after trimming"`
		}
	}) (*struct{ Body messaging.View }, error) {
		v, err := s.screenedEdit(ctx, in.ID, principalOf(ctx).UserID, in.Body.Body)
		if err != nil {
			return nil, err
		}
		return &struct{ Body messaging.View }{Body: v}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "delete-message", Method: http.MethodDelete, Path: "/v1/messages/{id}", Tags: tags,
		Summary: "Delete your message",
		Description: "Only its sender. The message stays as a tombstone (deleted, no body) so history and threads keep their shape. " +
			"Scope: write.",
		Security:      requires(auth.ScopeWrite),
		DefaultStatus: http.StatusNoContent,
	}, func(ctx context.Context, in *MessagePath) (*struct{}, error) {
		return nil, s.messaging.Delete(ctx, in.ID, principalOf(ctx).UserID)
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "get-thread", Method: http.MethodGet, Path: "/v1/messages/{id}/thread", Tags: tags,
		Summary:     "A message's thread",
		Description: "The thread's root then its replies, oldest first; id may be the root or any reply. Scope: read.",
		Security:    requires(auth.ScopeRead),
	}, func(ctx context.Context, in *struct {
		MessagePath
		Limit int    `query:"limit" minimum:"1" maximum:"100" default:"20"`
		After string `query:"after" maxLength:"64" doc:"next_cursor of the previous page"`
	}) (*struct{ Body MessageList }, error) {
		if err := checkMessageCursor("after", in.After); err != nil {
			return nil, err
		}
		p, err := s.messaging.Thread(ctx, in.ID, principalOf(ctx).UserID, in.After, in.Limit)
		if err != nil {
			return nil, err
		}
		return &struct{ Body MessageList }{Body: pageList(p)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "search-messages", Method: http.MethodGet, Path: "/v1/messages/search", Tags: tags,
		Summary: "Search your messages",
		Description: "Full text over the conversations you are in now (never one you left or were removed from), best match first. " +
			"Deleted messages and people who block you (or whom you block) are left out. Scope: read.",
		Security: requires(auth.ScopeRead),
	}, func(ctx context.Context, in *struct {
		Q              string                `query:"q" maxLength:"200" doc:"Words to find, all of them (1 to 10)"`
		ConversationID string                `query:"conversation_id" maxLength:"64"`
		From           eventParam[time.Time] `query:"from" doc:"Sent at or after"`
		To             eventParam[time.Time] `query:"to" doc:"Sent before"`
		Limit          int                   `query:"limit" minimum:"1" maximum:"100" default:"20"`
		Cursor         string                `query:"cursor" maxLength:"16" doc:"next_cursor of the previous page"`
	}) (*struct{ Body List[SearchResult] }, error) {
		r, err := s.messaging.Search(ctx, principalOf(ctx).UserID, messaging.SearchParams{Q: in.Q, ConversationID: in.ConversationID,
			From: in.From.ptr(), To: in.To.ptr(), Cursor: in.Cursor, Limit: in.Limit})
		if err != nil {
			return nil, err
		}
		out := List[SearchResult]{Object: "list", Data: make([]SearchResult, 0, len(r.Items)), HasMore: r.HasMore, NextCursor: r.NextCursor}
		for _, f := range r.Items {
			out.Data = append(out.Data, SearchResult{Object: "search_result", Message: messaging.ViewOf(f.Message),
				ConversationID: f.Message.ConversationID, Snippet: f.Snippet})
		}
		return &struct{ Body List[SearchResult] }{Body: out}, nil
	})
}
