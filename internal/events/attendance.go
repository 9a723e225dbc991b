package events

import (
	"context"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/ids"
)

// CheckIn records that userID attended, for the creator, from the start
// until CheckInGrace after the end. Anyone who answered going, waitlisted
// or maybe may be checked in (someone from the waitlist who came anyway
// attended). created is false when the check-in already existed.
func (s *Service) CheckIn(ctx context.Context, viewerID, eventID, userID string) (c *CheckIn, created bool, err error) {
	if !ids.Valid(ids.User, userID) {
		return nil, false, apperr.InvalidParam("user_id", "not_attending", "%q has not answered this event", userID)
	}
	err = s.with(ctx, eventID, func(l Locked) error {
		if err := mustManage(ctx, l, viewerID); err != nil {
			return err
		}
		now := s.clock.Now()
		e := l.Event()
		if e.Status == Cancelled {
			return errCancelled()
		}
		if !e.CheckInOpen(now) {
			return apperr.Conflictf("check_in_closed", "", "check-ins are recorded from the start until 24 hours after the end")
		}
		r, err := l.RSVP(ctx, userID)
		if err != nil {
			return err
		}
		if r == nil || r.Status == NotGoing {
			return apperr.InvalidParam("user_id", "not_attending", "%q has not answered going, waitlisted or maybe", userID)
		}
		c = &CheckIn{EventID: e.ID, UserID: userID, CreatedAt: now}
		if created, err = l.CheckIn(ctx, c); err != nil || !created {
			return err
		}
		e.AttendedCount++
		if r.Status == Going {
			e.AttendedGoing++
		}
		return l.SaveEvent(ctx)
	})
	if err != nil {
		return nil, false, err
	}
	return c, created, nil
}

// Reliability is the user's reliability now.
func (s *Service) Reliability(ctx context.Context, userID string) (*Reliability, error) {
	return s.store.Reliability(ctx, userID, s.clock.Now())
}

// AttendeeQuery asks for a page of an event's attendees.
type AttendeeQuery struct {
	EventID  string
	ViewerID string
	// Creator: the viewer created the event; they see every attendee
	// whatever their profile's privacy, whether they are checked in, and
	// their reliability.
	Creator bool
	Status  string // "" for every status
	After   *AttendeeCursor
	Limit   int
}

// AttendeeCursor is where a page of attendees ends: the status's rank in
// the list's order (going, waitlisted, maybe, not_going), the waitlist
// position, the RSVP id.
type AttendeeCursor struct {
	Rank     int
	Position int
	ID       string
}

// StatusRank is a status's place in attendee lists.
func StatusRank(status string) int {
	switch status {
	case Going:
		return 0
	case Waitlisted:
		return 1
	case Maybe:
		return 2
	}
	return 3
}

// Attendees lists an event's answers as the viewer may see them: never
// someone the viewer blocked or who blocked them, and profiles set to
// private only to the creator. Going first, then the waitlist in order,
// then maybe and not going.
func (s *Service) Attendees(ctx context.Context, viewerID, eventID, status, cursor string, limit int) ([]*Attendee, error) {
	e, err := s.Get(ctx, viewerID, eventID)
	if err != nil {
		return nil, err
	}
	if status != "" && status != Going && status != Waitlisted && status != Maybe && status != NotGoing {
		return nil, apperr.InvalidParam("status", "invalid_status", "status must be going, waitlisted, maybe or not_going")
	}
	q := &AttendeeQuery{EventID: e.ID, ViewerID: viewerID, Creator: e.CreatorID == viewerID, Status: status, Limit: limit}
	if cursor != "" {
		c, err := decodeAttendeeCursor(cursor)
		if err != nil {
			return nil, err
		}
		q.After = c
	}
	list, err := s.store.Attendees(ctx, q)
	if err != nil {
		return nil, err
	}
	if q.Creator {
		now := s.clock.Now()
		for _, a := range list {
			if a.Reliability, err = s.store.Reliability(ctx, a.UserID, now); err != nil {
				return nil, err
			}
		}
	}
	return list, nil
}

// NoShows is the number of people going who were not checked in, once the
// check-in window has closed; nil before.
func (s *Service) NoShows(e *Event) *int {
	if !e.AttendanceFinal(s.clock.Now()) {
		return nil
	}
	n := e.NoShows()
	return &n
}
