// Package events is the sports events domain: events with an optional
// recurrence, RSVPs with a capacity and a waitlist, invitations for
// invite-only events, check-ins and the reliability they feed, discovery,
// recommendations and the reminders worker.
//
// Every rule that decides who is going runs inside one transaction that
// holds the event's row lock (Store.WithEvent), so capacity holds under any
// concurrency, on one node or several.
package events

import (
	"time"

	_ "time/tzdata" // time zones must validate on machines without a zoneinfo database
)

// Visibility of an event.
const (
	Public     = "public"      // anyone signed in may find and join it
	InviteOnly = "invite_only" // the creator and invitees only; 404 to everyone else
)

// Status of an event.
const (
	Scheduled = "scheduled"
	Cancelled = "cancelled"
)

// RSVP statuses. Withdrawn and Removed appear only in event.rsvp payloads:
// the RSVP no longer exists.
const (
	Going      = "going"
	Waitlisted = "waitlisted"
	Maybe      = "maybe"
	NotGoing   = "not_going"
	Withdrawn  = "withdrawn"
	Removed    = "removed"
)

// Bounds of event fields: part of the API contract.
const (
	MaxTitle        = 200
	MaxDescription  = 5000
	MaxLocation     = 200
	MaxCapacity     = 10000
	MaxDuration     = 7 * 24 * time.Hour
	DefaultDuration = 2 * time.Hour
	MaxAhead        = 2 * 365 * 24 * time.Hour // how far ahead an event may start
	MaxCancelReason = 500
	MaxInvitees     = 100 // user ids per invitation request
	// CheckInGrace is how long after the end the creator may still record
	// check-ins; after it the attended and no-show counts are final.
	CheckInGrace = 24 * time.Hour
	// ReliabilityWindow is the period reliability is computed over.
	ReliabilityWindow = 365 * 24 * time.Hour
	DefaultRadiusKM   = 25
	MaxRadiusKM       = 500
)

// Event is a sports event. An occurrence of a recurring event is an Event of
// its own that shares SeriesID (the id of the first occurrence) with its
// siblings.
type Event struct {
	ID           string
	CreatorID    string
	SeriesID     string // "" for a one-off event
	Recurrence   string // the canonical RRULE of the series, "" for a one-off
	Title        string
	Description  string
	Sport        string // canonical name (internal/sports)
	Location     string // free-text place label
	Latitude     *float64
	Longitude    *float64
	Start        time.Time
	End          time.Time
	Timezone     string // IANA name
	Capacity     int    // max_participants
	SkillMin     string // "" when unbounded
	SkillMax     string
	Visibility   string
	Status       string
	CancelReason string

	GoingCount    int
	WaitlistCount int
	MaybeCount    int
	// AttendedCount counts check-ins; AttendedGoing those of people who
	// were going (the no-shows are the rest of the going).
	AttendedCount int
	AttendedGoing int
	// ReminderStage is how far the reminders worker got: 0 none, 1 the
	// 24-hour reminder, 2 the 1-hour one. A change of start time resets it.
	ReminderStage int

	CreatedAt   time.Time
	UpdatedAt   time.Time
	CancelledAt *time.Time
}

// SpotsLeft is how many more people can be going.
func (e *Event) SpotsLeft() int { return max(0, e.Capacity-e.GoingCount) }

// Started reports whether the event has begun at now.
func (e *Event) Started(now time.Time) bool { return !now.Before(e.Start) }

// CheckInOpen reports whether check-ins may be recorded at now: from the
// start until CheckInGrace after the end.
func (e *Event) CheckInOpen(now time.Time) bool {
	return !now.Before(e.Start) && !now.After(e.End.Add(CheckInGrace))
}

// AttendanceFinal reports whether the check-in window has closed.
func (e *Event) AttendanceFinal(now time.Time) bool { return now.After(e.End.Add(CheckInGrace)) }

// NoShows is the number of people going who were not checked in.
func (e *Event) NoShows() int { return max(0, e.GoingCount-e.AttendedGoing) }

// RSVP is one person's answer to an event.
type RSVP struct {
	ID      string
	EventID string
	UserID  string
	Status  string
	// Position is the 1-based place on the waitlist; 0 unless waitlisted.
	// Positions of an event are always exactly 1..n.
	Position int
	// GoingSince is when the person last became going (the reminders
	// worker reminds only those going before a reminder was due).
	GoingSince *time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Attendee is an RSVP as an attendee list shows it.
type Attendee struct {
	RSVP
	User        Person
	CheckedIn   bool
	Reliability *Reliability // only for the event's creator
}

// Person is the public part of a profile that lists of people show.
type Person struct {
	ID        string
	Username  string
	FirstName string
	LastName  string
}

// Invitation lets a user see and join an invite-only event.
type Invitation struct {
	EventID   string
	UserID    string
	InviterID string
	CreatedAt time.Time
}

// CheckIn records that a person attended.
type CheckIn struct {
	EventID   string
	UserID    string
	CreatedAt time.Time
}

// Reliability is the share of events a person attended among those they
// were going to, over ReliabilityWindow. Only events whose organiser took
// attendance (recorded at least one check-in) and whose check-in window has
// closed count, so an organiser who never checks anyone in makes nobody
// look unreliable.
type Reliability struct {
	Events   int      // events counted
	Attended int      // of which attended
	Score    *float64 // Attended/Events; nil when Events is 0
}

// Viewer is what discovery and recommendations need of the caller's profile.
type Viewer struct {
	ID        string
	Timezone  string
	Latitude  *float64
	Longitude *float64
	RadiusKM  float64
	// Sports maps each of the viewer's sports to their skill level ("" if unset).
	Sports map[string]string
}
