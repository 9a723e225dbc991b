package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/notifications"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// Notification is a record of the notification centre.
type Notification struct {
	Object string `json:"object" enum:"notification"`
	ID     string `json:"id" example:"ntf_068b2k4sq1ytzgq0bmf0qv7y3g"`
	Kind   string `json:"kind" example:"message.new" enum:"message.new,match.requested,match.accepted,match.declined,match.expired,event.updated,event.cancelled,event.waitlist_promoted,event.reminder,webhook.failing,verification.decided,moderation.decision" doc:"What happened; settings are per kind"`
	Title  string `json:"title" example:"Ann sent you 2 messages"`
	Body   string `json:"body" example:"Still on for tennis at 6?" doc:"A short text; may quote content (webhook events leave it out)"`
	// Data holds the ids a client opens.
	Data        map[string]string `json:"data" example:"{\"conversation_id\":\"cnv_068b2k4sq1ytzgq0bmf0qv7y3g\"}" doc:"Ids of what it is about: conversation_id, message_id, match_id, event_id..."`
	Count       int               `json:"count" example:"2" doc:"How many events it stands for: new messages of a conversation fold into one notification while it is unread"`
	CreatedAt   string            `json:"created_at" format:"date-time" example:"2026-03-01T12:00:00.000Z"`
	UpdatedAt   string            `json:"updated_at" format:"date-time" example:"2026-03-01T12:04:30.000Z" doc:"Latest activity; the centre lists by it"`
	ReadAt      *string           `json:"read_at" format:"date-time"`
	DeliveredAt *string           `json:"delivered_at" format:"date-time" doc:"When an app first acknowledged receiving it"`
}

func notificationOf(r *notifications.Record) Notification {
	data := r.Data
	if data == nil {
		data = map[string]string{}
	}
	return Notification{Object: "notification", ID: r.ID, Kind: r.Kind, Title: r.Title, Body: r.Body, Data: data, Count: r.Count,
		CreatedAt: wire.Time(r.CreatedAt), UpdatedAt: wire.Time(r.UpdatedAt), ReadAt: wire.OptTime(r.ReadAt), DeliveredAt: wire.OptTime(r.DeliveredAt)}
}

type notificationOut struct{ Body Notification }

type notificationIn struct {
	ID string `path:"id" maxLength:"64" example:"ntf_068b2k4sq1ytzgq0bmf0qv7y3g"`
}

// UnreadCount is the number of unread notifications.
type UnreadCount struct {
	Object string `json:"object" enum:"unread_count"`
	Count  int64  `json:"count" example:"3"`
}

// ReadNotificationsRequest is the optional body of read-notifications.
type ReadNotificationsRequest struct {
	UpTo string `json:"up_to,omitempty" maxLength:"64" example:"ntf_068b2k4sq1ytzgq0bmf0qv7y3g" doc:"Mark this one and everything listed after it (older activity); without it, all"`
}

// ReadNotificationsResult says what read-notifications did.
type ReadNotificationsResult struct {
	Object      string `json:"object" enum:"notifications_read"`
	Marked      int64  `json:"marked" example:"5" doc:"How many became read"`
	UnreadCount int64  `json:"unread_count" example:"0" doc:"Unread notifications left (newer ones than up_to)"`
}

func (s *server) registerNotifications() {
	tags := []string{"Notifications"}
	huma.Register(s.api, huma.Operation{
		OperationID: "list-notifications", Method: http.MethodGet, Path: "/v1/notifications", Tags: tags,
		Summary:     "List your notifications",
		Description: "The notification centre, latest activity first: a notification that absorbs another (a busy conversation) moves up. Scope: read.",
		Security:    requires(auth.ScopeRead),
	}, func(ctx context.Context, in *struct {
		Limit  int    `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"How many items to return (1-100)"`
		Cursor string `query:"cursor" maxLength:"64" doc:"next_cursor of the previous page"`
		Unread bool   `query:"unread" doc:"Only unread notifications"`
	}) (*struct{ Body List[Notification] }, error) {
		p := principalOf(ctx)
		rs, err := s.notifications.List(ctx, p.UserID, in.Unread, in.Cursor, in.Limit+1)
		if err != nil {
			return nil, err
		}
		out := listOf(rs, in.Limit, notifications.EncodeCursor, notificationOf)
		return &struct{ Body List[Notification] }{Body: out}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "unread-notification-count", Method: http.MethodGet, Path: "/v1/notifications/unread-count", Tags: tags,
		Summary: "Count your unread notifications", Description: "For a badge. Scope: read.", Security: requires(auth.ScopeRead),
	}, func(ctx context.Context, _ *struct{}) (*struct{ Body UnreadCount }, error) {
		n, err := s.notifications.UnreadCount(ctx, principalOf(ctx).UserID)
		if err != nil {
			return nil, err
		}
		return &struct{ Body UnreadCount }{Body: UnreadCount{Object: "unread_count", Count: n}}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "get-notification", Method: http.MethodGet, Path: "/v1/notifications/{id}", Tags: tags,
		Summary: "A notification", Description: "Scope: read.", Security: requires(auth.ScopeRead),
	}, func(ctx context.Context, in *notificationIn) (*notificationOut, error) {
		r, err := s.notifications.Get(ctx, principalOf(ctx).UserID, in.ID)
		if err != nil {
			return nil, err
		}
		return &notificationOut{Body: notificationOf(r)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "read-notification", Method: http.MethodPost, Path: "/v1/notifications/{id}/read", Tags: tags,
		Summary:     "Mark a notification read",
		Description: "Reading it again changes nothing. A push still waiting for it (quiet hours, retries) is then not sent. Scope: write.",
		Security:    requires(auth.ScopeWrite),
	}, func(ctx context.Context, in *notificationIn) (*notificationOut, error) {
		r, err := s.notifications.Read(ctx, principalOf(ctx).UserID, in.ID)
		if err != nil {
			return nil, err
		}
		return &notificationOut{Body: notificationOf(r)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "read-notifications", Method: http.MethodPost, Path: "/v1/notifications/read", Tags: tags,
		Summary:     "Mark notifications read",
		Description: "Marks read every notification up to `up_to` in the list's order (that one and all with older activity): what the person had seen when it was at the top. Without a body, all of them. Scope: write.",
		Security:    requires(auth.ScopeWrite),
	}, func(ctx context.Context, in *struct {
		Body *ReadNotificationsRequest
	}) (*struct{ Body ReadNotificationsResult }, error) {
		uid := principalOf(ctx).UserID
		upTo := ""
		if in.Body != nil {
			upTo = in.Body.UpTo
		}
		n, err := s.notifications.ReadAll(ctx, uid, upTo)
		if err != nil {
			return nil, err
		}
		left, err := s.notifications.UnreadCount(ctx, uid)
		if err != nil {
			return nil, err
		}
		return &struct{ Body ReadNotificationsResult }{Body: ReadNotificationsResult{Object: "notifications_read", Marked: n, UnreadCount: left}}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "ack-notification-delivered", Method: http.MethodPost, Path: "/v1/notifications/{id}/delivered", Tags: tags,
		Summary:     "Acknowledge a notification's delivery",
		Description: "An app calls this when a push arrives. The first acknowledgement sets delivered_at and records notification.delivered (delivery.channel app); later ones change nothing. Scope: write.",
		Security:    requires(auth.ScopeWrite),
	}, func(ctx context.Context, in *notificationIn) (*notificationOut, error) {
		r, err := s.notifications.AckDelivered(ctx, principalOf(ctx).UserID, in.ID)
		if err != nil {
			return nil, err
		}
		return &notificationOut{Body: notificationOf(r)}, nil
	})

	s.registerNotificationSettings()
	s.registerUnsubscribe()
	s.registerDevices()
	s.registerPush()
}
