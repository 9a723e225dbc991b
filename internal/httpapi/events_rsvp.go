package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/events"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// EventRSVP is a person's answer to an event.
type EventRSVP struct {
	Object           string `json:"object" enum:"rsvp"`
	ID               string `json:"id" example:"rsv_068b0m7r2cq1v3b7y5xg0w2k4m"`
	EventID          string `json:"event_id" example:"evt_068b0m3k8ve7q9dv4ts5xx1bq0"`
	UserID           string `json:"user_id" example:"usr_068ay3yzbf8z1rmbn3y0p6fs2g"`
	Status           string `json:"status" enum:"going,waitlisted,maybe,not_going" doc:"going when a place was free; waitlisted when the event was full"`
	WaitlistPosition *int   `json:"waitlist_position" example:"3" doc:"1..n while waitlisted, renumbered as people move up; null otherwise"`
	CreatedAt        string `json:"created_at" format:"date-time"`
	UpdatedAt        string `json:"updated_at" format:"date-time"`
}

func eventRSVPOf(r *events.RSVP) EventRSVP {
	out := EventRSVP{Object: "rsvp", ID: r.ID, EventID: r.EventID, UserID: r.UserID, Status: r.Status,
		CreatedAt: wire.Time(r.CreatedAt), UpdatedAt: wire.Time(r.UpdatedAt)}
	if r.Status == events.Waitlisted && r.Position > 0 {
		p := r.Position
		out.WaitlistPosition = &p
	}
	return out
}

// EventPerson is the public part of a profile in lists of people.
type EventPerson struct {
	Object    string `json:"object" enum:"user"`
	ID        string `json:"id"`
	Username  string `json:"username"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
}

// EventReliability is the share of events a person attended among those
// they were going to, over the last 12 months.
type EventReliability struct {
	Object   string   `json:"object" enum:"reliability"`
	Score    *float64 `json:"score" example:"0.9" doc:"attended / events; null when no event counts yet"`
	Events   int      `json:"events" example:"10" doc:"Events they were going to whose organiser took attendance, ended (check-ins closed) within 12 months"`
	Attended int      `json:"attended" example:"9"`
}

func eventReliabilityOf(r *events.Reliability) *EventReliability {
	if r == nil {
		return nil
	}
	return &EventReliability{Object: "reliability", Score: r.Score, Events: r.Events, Attended: r.Attended}
}

// EventAttendee is one answer in an event's attendee list.
type EventAttendee struct {
	Object           string            `json:"object" enum:"attendee"`
	User             EventPerson       `json:"user"`
	Status           string            `json:"status" enum:"going,waitlisted,maybe,not_going"`
	WaitlistPosition *int              `json:"waitlist_position"`
	CheckedIn        *bool             `json:"checked_in,omitempty" doc:"Shown to the creator"`
	Reliability      *EventReliability `json:"reliability,omitempty" doc:"Shown to the creator"`
}

// EventInvitation lets a user see and join an invite-only event.
type EventInvitation struct {
	Object    string `json:"object" enum:"invitation"`
	EventID   string `json:"event_id"`
	UserID    string `json:"user_id"`
	InviterID string `json:"inviter_id"`
	CreatedAt string `json:"created_at" format:"date-time"`
}

func eventInvitationOf(i *events.Invitation) EventInvitation {
	return EventInvitation{Object: "invitation", EventID: i.EventID, UserID: i.UserID, InviterID: i.InviterID, CreatedAt: wire.Time(i.CreatedAt)}
}

// EventCheckIn records that a person attended.
type EventCheckIn struct {
	Object    string `json:"object" enum:"check_in"`
	EventID   string `json:"event_id"`
	UserID    string `json:"user_id"`
	CreatedAt string `json:"created_at" format:"date-time"`
}

func (s *server) registerEventRSVPs(tags []string) {
	huma.Register(s.api, huma.Operation{
		OperationID: "put-rsvp", Method: http.MethodPut, Path: "/v1/events/{id}/rsvp", Tags: tags,
		Summary: "Answer an event",
		Description: "Sets your answer. `going` takes a place while one is free and puts you at the end of the waitlist otherwise " +
			"(answering going again while waitlisted keeps your place). Leaving a place moves the first waitlisted person up. " +
			"The event's capacity is never exceeded, however many answer at once. Records event.rsvp when the answer changes. " +
			"409 once the event has started or is cancelled. Scope: events or write.",
		Security: requires(auth.ScopeEvents, auth.ScopeWrite),
	}, func(ctx context.Context, in *struct {
		EventPath
		Body struct {
			Status string `json:"status" enum:"going,maybe,not_going" example:"going"`
		}
	}) (*struct{ Body EventRSVP }, error) {
		r, _, err := s.events.Answer(ctx, principalOf(ctx).UserID, in.ID, in.Body.Status)
		if err != nil {
			return nil, err
		}
		return &struct{ Body EventRSVP }{Body: eventRSVPOf(r)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "get-rsvp", Method: http.MethodGet, Path: "/v1/events/{id}/rsvp", Tags: tags,
		Summary:     "Your answer to an event",
		Description: "404 if you have not answered. Scope: read, events or write.",
		Security:    requires(auth.ScopeRead, auth.ScopeEvents, auth.ScopeWrite),
	}, func(ctx context.Context, in *EventPath) (*struct{ Body EventRSVP }, error) {
		r, err := s.events.MyRSVP(ctx, principalOf(ctx).UserID, in.ID)
		if err != nil {
			return nil, err
		}
		return &struct{ Body EventRSVP }{Body: eventRSVPOf(r)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "delete-rsvp", Method: http.MethodDelete, Path: "/v1/events/{id}/rsvp", Tags: tags,
		Summary: "Withdraw your answer",
		Description: "Deletes your answer; a place you held goes to the first person on the waitlist, who is told. " +
			"Records event.rsvp with status withdrawn. Scope: events or write.",
		Security:      requires(auth.ScopeEvents, auth.ScopeWrite),
		DefaultStatus: http.StatusNoContent,
	}, func(ctx context.Context, in *EventPath) (*struct{}, error) {
		return nil, s.events.Withdraw(ctx, principalOf(ctx).UserID, in.ID)
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "list-attendees", Method: http.MethodGet, Path: "/v1/events/{id}/attendees", Tags: tags,
		Summary: "An event's attendees",
		Description: "Going first, then the waitlist in order, then maybe and not going. Nobody you blocked or who blocked you " +
			"appears, nor profiles set to private (except to the creator, who also sees check-ins and each person's reliability). Scope: read or events.",
		Security: requires(auth.ScopeRead, auth.ScopeEvents),
	}, func(ctx context.Context, in *struct {
		EventPath
		ListParams
		Status string `query:"status" enum:"going,waitlisted,maybe,not_going" doc:"Only answers with this status"`
	}) (*struct{ Body List[EventAttendee] }, error) {
		p := principalOf(ctx)
		list, err := s.events.Attendees(ctx, p.UserID, in.ID, in.Status, in.Cursor, in.Limit)
		if err != nil {
			return nil, err
		}
		out := listOf(list, in.Limit, events.EncodeAttendeeCursor, func(a *events.Attendee) EventAttendee {
			r := eventRSVPOf(&a.RSVP)
			item := EventAttendee{Object: "attendee", Status: a.Status, WaitlistPosition: r.WaitlistPosition,
				User: EventPerson{Object: "user", ID: a.User.ID, Username: a.User.Username, FirstName: a.User.FirstName, LastName: a.User.LastName}}
			if a.Reliability != nil {
				checked := a.CheckedIn
				item.CheckedIn, item.Reliability = &checked, eventReliabilityOf(a.Reliability)
			}
			return item
		})
		return &struct{ Body List[EventAttendee] }{Body: out}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "remove-attendee", Method: http.MethodDelete, Path: "/v1/events/{id}/attendees/{user_id}", Tags: tags,
		Summary: "Remove an attendee",
		Description: "The creator takes someone off the event before it starts; they are told, and a place they held goes to the first " +
			"person on the waitlist. Records event.rsvp with status removed. Scope: events.",
		Security:      requires(auth.ScopeEvents),
		DefaultStatus: http.StatusNoContent,
	}, func(ctx context.Context, in *struct {
		EventPath
		UserID string `path:"user_id" maxLength:"64" example:"usr_068ay3yzbf8z1rmbn3y0p6fs2g"`
	}) (*struct{}, error) {
		return nil, s.events.RemoveAttendee(ctx, principalOf(ctx).UserID, in.ID, in.UserID)
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "create-check-in", Method: http.MethodPost, Path: "/v1/events/{id}/check-ins", Tags: tags,
		Summary: "Record that someone attended",
		Description: "The creator checks in someone who answered going, waitlisted or maybe, from the start until 24 hours after the end " +
			"(409 check_in_closed otherwise). 201 the first time, 200 with the same record after. Check-ins feed attendance " +
			"counts and reliability. Scope: events.",
		Security:      requires(auth.ScopeEvents),
		DefaultStatus: http.StatusCreated,
	}, func(ctx context.Context, in *struct {
		EventPath
		Body struct {
			UserID string `json:"user_id" maxLength:"64" example:"usr_068ay3yzbf8z1rmbn3y0p6fs2g"`
		}
	}) (*struct {
		Status int
		Body   EventCheckIn
	}, error) {
		c, created, err := s.events.CheckIn(ctx, principalOf(ctx).UserID, in.ID, in.Body.UserID)
		if err != nil {
			return nil, err
		}
		status := http.StatusCreated
		if !created {
			status = http.StatusOK
		}
		return &struct {
			Status int
			Body   EventCheckIn
		}{Status: status, Body: EventCheckIn{Object: "check_in", EventID: c.EventID, UserID: c.UserID, CreatedAt: wire.Time(c.CreatedAt)}}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "invite-to-event", Method: http.MethodPost, Path: "/v1/events/{id}/invitations", Tags: tags,
		Summary: "Invite people to an event",
		Description: "The creator invites users by id (at most 100 at a time) until the event ends; invitees may see and join an " +
			"invite-only event. Inviting someone again is not an error. Scope: events.",
		Security: requires(auth.ScopeEvents),
	}, func(ctx context.Context, in *struct {
		EventPath
		Body struct {
			UserIDs []string `json:"user_ids" minItems:"1" maxItems:"100" example:"[\"usr_068ay3yzbf8z1rmbn3y0p6fs2g\"]"`
		}
	}) (*struct{ Body List[EventInvitation] }, error) {
		list, err := s.events.Invite(ctx, principalOf(ctx).UserID, in.ID, in.Body.UserIDs)
		if err != nil {
			return nil, err
		}
		out := List[EventInvitation]{Object: "list", Data: make([]EventInvitation, 0, len(list))}
		for _, i := range list {
			out.Data = append(out.Data, eventInvitationOf(i))
		}
		return &struct{ Body List[EventInvitation] }{Body: out}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "list-invitations", Method: http.MethodGet, Path: "/v1/events/{id}/invitations", Tags: tags,
		Summary:     "An event's invitations",
		Description: "For the creator, in user id order. Scope: events.",
		Security:    requires(auth.ScopeEvents),
	}, func(ctx context.Context, in *struct {
		EventPath
		ListParams
	}) (*struct{ Body List[EventInvitation] }, error) {
		list, err := s.events.Invitations(ctx, principalOf(ctx).UserID, in.ID, in.Cursor, in.Limit)
		if err != nil {
			return nil, err
		}
		return &struct{ Body List[EventInvitation] }{Body: listOf(list, in.Limit, func(i *events.Invitation) string { return i.UserID }, eventInvitationOf)}, nil
	})
}
