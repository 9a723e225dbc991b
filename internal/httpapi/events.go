package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/events"
	"github.com/matchpoint-api/matchpoint/internal/moderation"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// SportsEvent is the Event resource (API document, section 2), with
// Matchpoint's own fields after the document's.
type SportsEvent struct {
	Object          string   `json:"object" enum:"event"`
	ID              string   `json:"id" example:"evt_068b0m3k8ve7q9dv4ts5xx1bq0"`
	Title           string   `json:"title" example:"Sunday morning doubles"`
	Description     string   `json:"description" example:"Friendly doubles, balls provided."`
	Sport           string   `json:"sport" example:"tennis" doc:"Canonical sport name (GET /v1/sports)"`
	Location        string   `json:"location" example:"Parc de la Tête d'Or, Lyon" doc:"Free-text place label"`
	Date            string   `json:"date" format:"date-time" example:"2026-06-07T07:00:00.000Z" doc:"Start"`
	MaxParticipants int      `json:"max_participants" example:"4"`
	CreatorID       string   `json:"creator_id" example:"usr_068ay3yzbf8z1rmbn3y0p6fs2g"`
	CreatedAt       string   `json:"created_at" format:"date-time"`
	EndDate         string   `json:"end_date" format:"date-time" example:"2026-06-07T09:00:00.000Z"`
	Timezone        string   `json:"timezone" example:"Europe/Paris" doc:"IANA time zone the event is organised in; occurrences of a series keep its local time"`
	Latitude        *float64 `json:"latitude" example:"45.7772" doc:"Of the venue; null when unknown"`
	Longitude       *float64 `json:"longitude" example:"4.8552"`
	SkillMin        *string  `json:"skill_min" enum:"beginner,intermediate,advanced,expert" doc:"Lowest level the event suits; null: any"`
	SkillMax        *string  `json:"skill_max" enum:"beginner,intermediate,advanced,expert" doc:"Highest level the event suits; null: any"`
	Visibility      string   `json:"visibility" enum:"public,invite_only"`
	Status          string   `json:"status" enum:"scheduled,cancelled"`
	CancelReason    string   `json:"cancel_reason,omitempty"`
	SeriesID        *string  `json:"series_id" doc:"Shared by the occurrences of a recurring event (the first occurrence's id); null for a one-off"`
	Recurrence      *string  `json:"recurrence" example:"FREQ=WEEKLY;BYDAY=SU;COUNT=8" doc:"The series' rule (RFC 5545 RRULE)"`
	GoingCount      int      `json:"going_count"`
	WaitlistCount   int      `json:"waitlist_count"`
	MaybeCount      int      `json:"maybe_count"`
	SpotsLeft       int      `json:"spots_left"`
	AttendedCount   int      `json:"attended_count" doc:"Check-ins recorded"`
	NoShowCount     *int     `json:"no_show_count" doc:"People going who were not checked in; null until the check-in window (until 24 h after the end) closes"`
	UpdatedAt       string   `json:"updated_at" format:"date-time"`
	CancelledAt     *string  `json:"cancelled_at" format:"date-time"`
	DistanceKM      *float64 `json:"distance_km,omitempty" doc:"From the place searched near"`
}

func (s *server) sportsEventOf(e *events.Event) SportsEvent {
	ptr := func(v string) *string {
		if v == "" {
			return nil
		}
		return &v
	}
	out := SportsEvent{
		Object: "event", ID: e.ID, Title: e.Title, Description: e.Description, Sport: e.Sport, Location: e.Location,
		Date: wire.Time(e.Start), MaxParticipants: e.Capacity, CreatorID: e.CreatorID, CreatedAt: wire.Time(e.CreatedAt),
		EndDate: wire.Time(e.End), Timezone: e.Timezone, Latitude: e.Latitude, Longitude: e.Longitude,
		SkillMin: ptr(e.SkillMin), SkillMax: ptr(e.SkillMax), Visibility: e.Visibility, Status: e.Status,
		CancelReason: e.CancelReason, SeriesID: ptr(e.SeriesID), Recurrence: ptr(e.Recurrence),
		GoingCount: e.GoingCount, WaitlistCount: e.WaitlistCount, MaybeCount: e.MaybeCount, SpotsLeft: e.SpotsLeft(),
		AttendedCount: e.AttendedCount, UpdatedAt: wire.Time(e.UpdatedAt), CancelledAt: wire.OptTime(e.CancelledAt),
	}
	out.NoShowCount = s.events.NoShows(e)
	return out
}

// EventDraft is the body of POST /v1/events.
type EventDraft struct {
	Title           string     `json:"title" minLength:"1" maxLength:"200" example:"Sunday morning doubles"`
	Description     string     `json:"description,omitempty" maxLength:"5000" example:"Friendly doubles, balls provided."`
	Sport           string     `json:"sport" maxLength:"100" example:"tennis" doc:"A sport of GET /v1/sports; aliases are accepted"`
	Location        string     `json:"location" minLength:"1" maxLength:"200" example:"Parc de la Tête d'Or, Lyon" doc:"Free-text place label"`
	Latitude        *float64   `json:"latitude,omitempty" example:"45.7772" doc:"-90..90, with longitude; default: placed from location when the service can"`
	Longitude       *float64   `json:"longitude,omitempty" example:"4.8552" doc:"-180..180, with latitude"`
	Date            time.Time  `json:"date" example:"2026-06-07T07:00:00Z" doc:"Start, in the future (within two years)"`
	EndDate         *time.Time `json:"end_date,omitempty" example:"2026-06-07T09:00:00Z" doc:"After date, at most 7 days later; default: two hours after date"`
	Timezone        string     `json:"timezone,omitempty" maxLength:"64" example:"Europe/Paris" doc:"IANA time zone; default: your profile's"`
	MaxParticipants int        `json:"max_participants" minimum:"1" maximum:"10000" example:"4" doc:"Places; the creator takes none unless they RSVP"`
	SkillMin        string     `json:"skill_min,omitempty" enum:"beginner,intermediate,advanced,expert"`
	SkillMax        string     `json:"skill_max,omitempty" enum:"beginner,intermediate,advanced,expert"`
	Visibility      string     `json:"visibility,omitempty" enum:"public,invite_only" doc:"Default public. Invite-only events are seen by the creator and invitees alone"`
	Recurrence      string     `json:"recurrence,omitempty" maxLength:"200" example:"FREQ=WEEKLY;BYDAY=SU;COUNT=8" doc:"RFC 5545 RRULE subset: FREQ=DAILY or WEEKLY, INTERVAL, BYDAY, and COUNT or UNTIL (at most 100 occurrences). Each occurrence becomes an event at the same local time in timezone, across daylight-saving changes"`
}

// EventNullableText is a PATCH field that may be absent, null (clear) or text.
type EventNullableText struct {
	Set   bool
	Null  bool
	Value string
}

// UnmarshalJSON records that the field was sent, and whether as null.
func (n *EventNullableText) UnmarshalJSON(b []byte) error {
	n.Set = true
	if string(b) == "null" {
		n.Null = true
		return nil
	}
	return json.Unmarshal(b, &n.Value)
}

// Schema tells Huma the field is a nullable skill level.
func (EventNullableText) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: "string", Nullable: true, Enum: []any{"beginner", "intermediate", "advanced", "expert", nil}}
}

// EventPatch is the body of PATCH /v1/events/{id}: absent fields stay.
type EventPatch struct {
	EventSeriesPatch
	Date     *time.Time `json:"date,omitempty" example:"2026-06-07T08:00:00Z" doc:"Moves the event, keeping its length unless end_date is sent too"`
	EndDate  *time.Time `json:"end_date,omitempty"`
	Timezone *string    `json:"timezone,omitempty" maxLength:"64" example:"Europe/Paris"`
}

// EventSeriesPatch is the body of PATCH /v1/events/{id}/series: what may
// change on every occurrence at once (not their times).
type EventSeriesPatch struct {
	Title           *string           `json:"title,omitempty" minLength:"1" maxLength:"200" example:"Sunday doubles (new courts)"`
	Description     *string           `json:"description,omitempty" maxLength:"5000"`
	Sport           *string           `json:"sport,omitempty" maxLength:"100"`
	Location        *string           `json:"location,omitempty" minLength:"1" maxLength:"200" example:"Tennis Club de Lyon"`
	Latitude        NullableNumber    `json:"latitude,omitempty" doc:"-90..90, set with longitude; null clears both"`
	Longitude       NullableNumber    `json:"longitude,omitempty" doc:"-180..180, set with latitude; null clears both"`
	MaxParticipants *int              `json:"max_participants,omitempty" minimum:"1" maximum:"10000" example:"6" doc:"Not below the number going (409); a rise moves people up from the waitlist"`
	SkillMin        EventNullableText `json:"skill_min,omitempty"`
	SkillMax        EventNullableText `json:"skill_max,omitempty"`
	Visibility      *string           `json:"visibility,omitempty" enum:"public,invite_only" doc:"Making an event invite-only invites everyone who answered it"`
}

func (p *EventSeriesPatch) domain() events.Patch {
	opt := func(n NullableNumber) events.Opt[float64] {
		return events.Opt[float64]{Set: n.Set, Null: n.Null, Value: n.Value}
	}
	txt := func(n EventNullableText) events.Opt[string] {
		return events.Opt[string]{Set: n.Set, Null: n.Null, Value: n.Value}
	}
	return events.Patch{Title: p.Title, Description: p.Description, Sport: p.Sport, Location: p.Location,
		Latitude: opt(p.Latitude), Longitude: opt(p.Longitude), MaxParticipants: p.MaxParticipants,
		SkillMin: txt(p.SkillMin), SkillMax: txt(p.SkillMax), Visibility: p.Visibility}
}

// EventCancel is the optional body of the cancel operations.
type EventCancel struct {
	Reason string `json:"reason,omitempty" maxLength:"500" example:"Courts closed for repairs." doc:"Told to attendees"`
}

// eventParam is an optional query parameter: Huma takes no pointers there.
type eventParam[T any] struct {
	Value T
	IsSet bool
}

func (o eventParam[T]) Schema(r huma.Registry) *huma.Schema {
	return huma.SchemaFromType(r, reflect.TypeOf(o.Value))
}

func (o *eventParam[T]) Receiver() reflect.Value      { return reflect.ValueOf(o).Elem().Field(0) }
func (o *eventParam[T]) OnParamSet(isSet bool, _ any) { o.IsSet = isSet }

func (o eventParam[T]) ptr() *T {
	if !o.IsSet {
		return nil
	}
	return &o.Value
}

// EventPath is the path of operations on one event.
type EventPath struct {
	ID string `path:"id" maxLength:"64" example:"evt_068b0m3k8ve7q9dv4ts5xx1bq0"`
}

type eventOut struct{ Body SportsEvent }

func (s *server) registerEvents() {
	tags := []string{"Events and activities"}
	huma.Register(s.api, huma.Operation{
		OperationID: "create-event", Method: http.MethodPost, Path: "/v1/events", Tags: tags,
		Summary: "Create an event",
		Description: "Creates a sports event, or every occurrence of a recurring one (each an event of its own sharing `series_id`; " +
			"the answer is the first). Records event.created for each. Scope: events.",
		Security:      requires(auth.ScopeEvents),
		DefaultStatus: http.StatusCreated,
	}, func(ctx context.Context, in *struct{ Body EventDraft }) (*struct {
		Location string `header:"Location"`
		Body     SportsEvent
	}, error) {
		b, me := in.Body, principalOf(ctx).UserID
		e, err := screened(ctx, s, me, moderation.TargetEvent, "", moderation.ContextEvent, eventTexts(&b.Title, &b.Description), func() (*events.Event, string, error) {
			e, err := s.events.Create(ctx, me, events.Draft{
				Title: b.Title, Description: b.Description, Sport: b.Sport, Location: b.Location, Latitude: b.Latitude,
				Longitude: b.Longitude, Date: b.Date, EndDate: b.EndDate, Timezone: b.Timezone, MaxParticipants: b.MaxParticipants,
				SkillMin: b.SkillMin, SkillMax: b.SkillMax, Visibility: b.Visibility, Recurrence: b.Recurrence,
			})
			if err != nil {
				return nil, "", err
			}
			return e, e.ID, nil
		})
		if err != nil {
			return nil, err
		}
		return &struct {
			Location string `header:"Location"`
			Body     SportsEvent
		}{Location: "/v1/events/" + e.ID, Body: s.sportsEventOf(e)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "get-event", Method: http.MethodGet, Path: "/v1/events/{id}", Tags: tags,
		Summary:     "An event",
		Description: "An invite-only event is 404 to everyone but its creator and invitees, as is any event to someone its creator blocked (or who blocked them). Scope: read or events.",
		Security:    requires(auth.ScopeRead, auth.ScopeEvents),
	}, func(ctx context.Context, in *EventPath) (*eventOut, error) {
		e, err := s.events.Get(ctx, principalOf(ctx).UserID, in.ID)
		if err != nil {
			return nil, err
		}
		return &eventOut{Body: s.sportsEventOf(e)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "update-event", Method: http.MethodPatch, Path: "/v1/events/{id}", Tags: tags,
		Summary: "Change an event",
		Description: "The creator changes the fields sent, until the event starts. Attendees are notified of a change of time or place. " +
			"Records event.updated when something changed. Scope: events.",
		Security: requires(auth.ScopeEvents),
	}, func(ctx context.Context, in *struct {
		EventPath
		Body EventPatch
	}) (*eventOut, error) {
		p := in.Body.domain()
		p.Date, p.EndDate, p.Timezone = in.Body.Date, in.Body.EndDate, in.Body.Timezone
		me := principalOf(ctx).UserID
		e, err := screened(ctx, s, me, moderation.TargetEvent, in.ID, moderation.ContextEvent, eventTexts(p.Title, p.Description),
			func() (*events.Event, string, error) {
				e, err := s.events.Update(ctx, me, in.ID, p)
				return e, in.ID, err
			})
		if err != nil {
			return nil, err
		}
		return &eventOut{Body: s.sportsEventOf(e)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "cancel-event", Method: http.MethodPost, Path: "/v1/events/{id}/cancel", Tags: tags,
		Summary:     "Cancel an event",
		Description: "The creator cancels an event that has not started; everyone who answered going, waitlisted or maybe is notified. Records event.cancelled. Scope: events.",
		Security:    requires(auth.ScopeEvents),
	}, func(ctx context.Context, in *struct {
		EventPath
		Body *EventCancel
	}) (*eventOut, error) {
		reason := ""
		if in.Body != nil {
			reason = in.Body.Reason
		}
		e, err := s.events.Cancel(ctx, principalOf(ctx).UserID, in.ID, reason)
		if err != nil {
			return nil, err
		}
		return &eventOut{Body: s.sportsEventOf(e)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "cancel-event-series", Method: http.MethodPost, Path: "/v1/events/{id}/series/cancel", Tags: tags,
		Summary: "Cancel a whole series",
		Description: "Cancels every occurrence of the event's series that has not started, in one step, as cancel-event does each; " +
			"answers those it cancelled. 409 not_a_series for a one-off event. Scope: events.",
		Security: requires(auth.ScopeEvents),
	}, func(ctx context.Context, in *struct {
		EventPath
		Body *EventCancel
	}) (*struct{ Body List[SportsEvent] }, error) {
		reason := ""
		if in.Body != nil {
			reason = in.Body.Reason
		}
		list, err := s.events.CancelSeries(ctx, principalOf(ctx).UserID, in.ID, reason)
		if err != nil {
			return nil, err
		}
		return &struct{ Body List[SportsEvent] }{Body: s.eventList(list)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "update-event-series", Method: http.MethodPatch, Path: "/v1/events/{id}/series", Tags: tags,
		Summary: "Change a whole series",
		Description: "Applies the change to every occurrence of the event's series that has not started, all or none; " +
			"times are changed one occurrence at a time. Answers the occurrences changed. Scope: events.",
		Security: requires(auth.ScopeEvents),
	}, func(ctx context.Context, in *struct {
		EventPath
		Body EventSeriesPatch
	}) (*struct{ Body List[SportsEvent] }, error) {
		me := principalOf(ctx).UserID
		list, err := screened(ctx, s, me, moderation.TargetEvent, in.ID, moderation.ContextEvent, eventTexts(in.Body.Title, in.Body.Description),
			func() ([]*events.Event, string, error) {
				l, err := s.events.UpdateSeries(ctx, me, in.ID, in.Body.domain())
				return l, in.ID, err
			})
		if err != nil {
			return nil, err
		}
		return &struct{ Body List[SportsEvent] }{Body: s.eventList(list)}, nil
	})

	s.registerEventRSVPs(tags)
	s.registerEventDiscovery(tags)
}

func (s *server) eventList(list []*events.Event) List[SportsEvent] {
	out := List[SportsEvent]{Object: "list", Data: make([]SportsEvent, 0, len(list))}
	for _, e := range list {
		out.Data = append(out.Data, s.sportsEventOf(e))
	}
	return out
}
