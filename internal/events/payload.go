package events

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// Payload is data.event of event.* events: the Event fields of the API
// document, section 2, then Matchpoint's own.
type Payload struct {
	ID              string   `json:"id"`
	Title           string   `json:"title"`
	Description     string   `json:"description"`
	Sport           string   `json:"sport"`
	Location        string   `json:"location"`
	Date            string   `json:"date"`
	MaxParticipants int      `json:"max_participants"`
	CreatorID       string   `json:"creator_id"`
	CreatedAt       string   `json:"created_at"`
	EndDate         string   `json:"end_date"`
	Timezone        string   `json:"timezone"`
	Latitude        *float64 `json:"latitude"`
	Longitude       *float64 `json:"longitude"`
	SkillMin        *string  `json:"skill_min"`
	SkillMax        *string  `json:"skill_max"`
	Visibility      string   `json:"visibility"`
	Status          string   `json:"status"`
	SeriesID        *string  `json:"series_id"`
	Recurrence      *string  `json:"recurrence"`
	GoingCount      int      `json:"going_count"`
	WaitlistCount   int      `json:"waitlist_count"`
	UpdatedAt       string   `json:"updated_at"`
	CancelledAt     *string  `json:"cancelled_at"`
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// PayloadOf renders an event as event.* data carry it.
func PayloadOf(e *Event) Payload {
	return Payload{
		ID: e.ID, Title: e.Title, Description: e.Description, Sport: e.Sport, Location: e.Location,
		Date: wire.Time(e.Start), MaxParticipants: e.Capacity, CreatorID: e.CreatorID, CreatedAt: wire.Time(e.CreatedAt),
		EndDate: wire.Time(e.End), Timezone: e.Timezone, Latitude: e.Latitude, Longitude: e.Longitude,
		SkillMin: optString(e.SkillMin), SkillMax: optString(e.SkillMax), Visibility: e.Visibility, Status: e.Status,
		SeriesID: optString(e.SeriesID), Recurrence: optString(e.Recurrence),
		GoingCount: e.GoingCount, WaitlistCount: e.WaitlistCount,
		UpdatedAt: wire.Time(e.UpdatedAt), CancelledAt: wire.OptTime(e.CancelledAt),
	}
}

// RSVPPayload is data.rsvp of event.rsvp.
type RSVPPayload struct {
	ID               string `json:"id"`
	EventID          string `json:"event_id"`
	UserID           string `json:"user_id"`
	Status           string `json:"status"`
	WaitlistPosition *int   `json:"waitlist_position"`
	CreatedAt        string `json:"created_at"`
	UpdatedAt        string `json:"updated_at"`
}

func rsvpPayloadOf(r *RSVP, status string) RSVPPayload {
	p := RSVPPayload{ID: r.ID, EventID: r.EventID, UserID: r.UserID, Status: status,
		CreatedAt: wire.Time(r.CreatedAt), UpdatedAt: wire.Time(r.UpdatedAt)}
	if status == Waitlisted && r.Position > 0 {
		pos := r.Position
		p.WaitlistPosition = &pos
	}
	return p
}

// record writes an event.created/updated/cancelled event about the locked
// event. Its audience is who may read the event: the creator, invitees and
// everyone who answered it. A public event may be read by anyone signed in,
// but its changes reach only those accounts' subscribers (and Enterprise
// admins'), so a webhook does not become a feed of every event on the
// platform.
func record(ctx context.Context, l Locked, now time.Time, kind string) error {
	e := l.Event()
	ev, err := outbox.New(now, kind, e.CreatorID, "event", PayloadOf(e))
	if err != nil {
		return err
	}
	if ev.Audience, err = l.Audience(ctx); err != nil {
		return err
	}
	return l.Record(ctx, &ev)
}

// recordRSVP writes event.rsvp for one change of an answer, with the event
// as it is after the change. status is what the answer became (Withdrawn
// or Removed when it is gone).
func recordRSVP(ctx context.Context, l Locked, now time.Time, r *RSVP, status string) error {
	e := l.Event()
	ev, err := outbox.New(now, outbox.EventRSVP, r.UserID, "event", PayloadOf(e))
	if err != nil {
		return err
	}
	if err := addData(&ev, "rsvp", rsvpPayloadOf(r, status)); err != nil {
		return err
	}
	aud, err := l.Audience(ctx)
	if err != nil {
		return err
	}
	// The person whose answer it is reads their own change, even once
	// they are no longer among those who answered.
	ev.Audience = appendUnique(aud, r.UserID)
	return l.Record(ctx, &ev)
}

// addData puts a second resource into an event's data (event.rsvp carries
// the event and the RSVP).
func addData(ev *outbox.Event, name string, obj any) error {
	var env outbox.Envelope
	if err := json.Unmarshal(ev.Payload, &env); err != nil {
		return err
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	env.Data[name] = raw
	ev.Payload, err = json.Marshal(env)
	return err
}

func appendUnique(list []string, id string) []string {
	for _, x := range list {
		if x == id {
			return list
		}
	}
	return append(list, id)
}

// notifyAnswered sends n's text to everyone going, waitlisted or maybe.
func notifyAnswered(ctx context.Context, l Locked, now time.Time, kind, title, body string) error {
	rs, err := l.RSVPs(ctx, Going, Waitlisted, Maybe)
	if err != nil {
		return err
	}
	e := l.Event()
	for _, r := range rs {
		if r.UserID == e.CreatorID {
			continue // the creator made the change
		}
		n := notify.New(now, r.UserID, kind, title, body, map[string]string{"event_id": e.ID})
		if err := l.Notify(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// zoneOf is the event's time zone, for texts people read.
func zoneOf(e *Event) *time.Location {
	loc, err := time.LoadLocation(e.Timezone)
	if err != nil {
		return time.UTC
	}
	return loc
}

func whenText(e *Event) string { return e.Start.In(zoneOf(e)).Format("Mon 2 Jan 2006, 15:04 MST") }

func placeText(e *Event) string {
	if e.Location != "" {
		return e.Location
	}
	return "the venue"
}

func eventTitle(e *Event) string {
	if e.Title == "" {
		return "an event"
	}
	return fmt.Sprintf("%q", e.Title)
}
