package events

import (
	"context"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
)

// Store is the persistence the events domain needs.
type Store interface {
	// CreateEvents inserts the events (the occurrences of one series, or a
	// single event) and their outbox events in one transaction.
	CreateEvents(ctx context.Context, evs []*Event, out []*outbox.Event) error
	// ViewEvent returns an event and what the viewer's access to it depends
	// on, or apperr NotFound.
	ViewEvent(ctx context.Context, id, viewerID string) (*Event, Access, error)
	// WithEvent runs fn in a transaction holding the event's row lock (FOR
	// UPDATE on PostgreSQL; SQLite's write lock), so that decisions about
	// capacity and the waitlist cannot interleave. apperr NotFound when the
	// event does not exist.
	WithEvent(ctx context.Context, id string, fn func(l Locked) error) error
	// WithEvents is WithEvent over several events in one transaction,
	// locked in id order (so two callers cannot deadlock).
	WithEvents(ctx context.Context, ids []string, fn func(l Locked) error) error
	// SeriesEvents lists the ids of a series' occurrences that start after
	// from, in start order.
	SeriesEvents(ctx context.Context, seriesID string, from time.Time) ([]string, error)

	// RSVPOf returns a user's answer to an event, or nil.
	RSVPOf(ctx context.Context, eventID, userID string) (*RSVP, error)
	// Viewer reads the profile facts discovery needs; apperr NotFound for
	// an account that does not exist.
	Viewer(ctx context.Context, userID string) (*Viewer, error)
	// Search finds the events q asks for, limit+1 of them (the extra one
	// tells there is more), with the sort key of each for the next cursor.
	Search(ctx context.Context, q *Query, limit int) ([]Found, error)
	// Candidates lists upcoming events a recommendation may pick from.
	Candidates(ctx context.Context, c *CandidateQuery) ([]Found, error)
	// Attendees lists an event's RSVPs as the viewer may see them.
	Attendees(ctx context.Context, q *AttendeeQuery) ([]*Attendee, error)
	// Invitations lists an event's invitations after the user id after.
	Invitations(ctx context.Context, eventID, after string, limit int) ([]*Invitation, error)
	// UserEvents lists events the user created or answers going, waitlisted
	// or maybe to.
	UserEvents(ctx context.Context, q *MineQuery) ([]*Mine, error)
	// Reliability computes a user's reliability at now.
	Reliability(ctx context.Context, userID string, now time.Time) (*Reliability, error)
	// DueReminders lists events with a reminder due at now.
	DueReminders(ctx context.Context, now time.Time, limit int) ([]string, error)
}

// Access is what a viewer's right to see an event depends on.
type Access struct {
	Invited bool // an invitation exists for the viewer
	Blocked bool // the viewer and the creator blocked one another
	HasRSVP bool // the viewer answered the event
}

// Locked is an event held under its row lock for the rest of a transaction.
// Everything written through it commits with the change, or not at all.
type Locked interface {
	// Event is the locked event; SaveEvent writes back its changes.
	Event() *Event
	SaveEvent(ctx context.Context) error
	// RSVP returns the user's answer, or nil.
	RSVP(ctx context.Context, userID string) (*RSVP, error)
	// RSVPs lists the answers with one of the statuses, waitlist in order.
	RSVPs(ctx context.Context, statuses ...string) ([]*RSVP, error)
	// Waitlisted returns the first n people on the waitlist, in order.
	Waitlisted(ctx context.Context, n int) ([]*RSVP, error)
	// PutRSVP inserts or updates an answer.
	PutRSVP(ctx context.Context, r *RSVP) error
	DeleteRSVP(ctx context.Context, id string) error
	// ShiftWaitlist moves everyone waitlisted after position up by places.
	ShiftWaitlist(ctx context.Context, after, places int) error
	// Audience lists who may read the event: creator, invitees, anyone
	// who answered it.
	Audience(ctx context.Context) ([]string, error)
	Invited(ctx context.Context, userID string) (bool, error)
	// Invite records an invitation; false if it already existed. apperr
	// NotFound when the user does not exist or blocks (or is blocked by)
	// the inviter.
	Invite(ctx context.Context, inv *Invitation) (bool, error)
	// InviteAttendees invites everyone who answered the event.
	InviteAttendees(ctx context.Context, inviterID string, at time.Time) error
	Blocked(ctx context.Context, a, b string) (bool, error)
	// CheckIn records attendance; false if it was already recorded (c then
	// holds the first record).
	CheckIn(ctx context.Context, c *CheckIn) (bool, error)
	CheckedIn(ctx context.Context, userID string) (bool, error)
	// Record writes an outbox event; Notify a notification.
	Record(ctx context.Context, ev *outbox.Event) error
	Notify(ctx context.Context, n *notify.Notification) error
}

// Geocoder places a free-text label on the map. The gazetteer of the
// matching domain implements it; without one, events have the coordinates
// their creator sends and nothing else.
type Geocoder interface {
	Geocode(label string) (lat, lon float64, ok bool)
}

// MatchGraph counts, for each event, how many of the user's accepted
// matches are going to it. Recommendations rank events up by it; without
// one every count is 0.
type MatchGraph interface {
	MatchesGoing(ctx context.Context, userID string, eventIDs []string) (map[string]int, error)
}
