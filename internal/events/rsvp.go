package events

import (
	"context"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/notify"
)

// The rules of answers. They run on a Locked event: the capacity decision,
// the waitlist's positions and the promotions that follow a departure all
// happen in the transaction that holds the event's row lock, so two answers
// can never both take the last place and positions stay exactly 1..n.

// Answer sets the viewer's answer to going, maybe or not_going. Going
// takes a place while there is one and joins the end of the waitlist
// otherwise; someone waitlisted who answers going again keeps their place
// in the queue. Leaving a place (answering maybe or not_going) moves the
// first waitlisted person up. It answers the RSVP as it now stands.
func (s *Service) Answer(ctx context.Context, viewerID, eventID, status string) (*RSVP, *Event, error) {
	if status != Going && status != Maybe && status != NotGoing {
		return nil, nil, apperr.InvalidParam("status", "invalid_status", "status must be going, maybe or not_going")
	}
	var out *RSVP
	var ev *Event
	err := s.with(ctx, eventID, func(l Locked) error {
		now := s.clock.Now()
		if err := open(ctx, l, viewerID, now); err != nil {
			return err
		}
		e := l.Event()
		ev = e
		cur, err := l.RSVP(ctx, viewerID)
		if err != nil {
			return err
		}
		if cur != nil && (cur.Status == status || (cur.Status == Waitlisted && status == Going)) {
			out = cur // nothing changes
			return nil
		}
		r := cur
		if r == nil {
			r = &RSVP{ID: ids.New(ids.RSVP), EventID: e.ID, UserID: viewerID, CreatedAt: now}
		}
		prev, prevPos := "", 0
		if cur != nil {
			prev, prevPos = cur.Status, cur.Position
			leave(e, prev)
		}
		r.Position, r.GoingSince, r.UpdatedAt = 0, nil, now
		switch status {
		case Going:
			if e.GoingCount < e.Capacity {
				r.Status, r.GoingSince = Going, &now
				e.GoingCount++
			} else {
				e.WaitlistCount++
				r.Status, r.Position = Waitlisted, e.WaitlistCount
			}
		case Maybe:
			r.Status = Maybe
			e.MaybeCount++
		default:
			r.Status = NotGoing
		}
		if err := l.PutRSVP(ctx, r); err != nil {
			return err
		}
		var promoted []*RSVP
		switch prev {
		case Waitlisted:
			if err := l.ShiftWaitlist(ctx, prevPos, 1); err != nil {
				return err
			}
		case Going:
			if promoted, err = fill(ctx, l, now); err != nil {
				return err
			}
		}
		e.UpdatedAt = now
		if err := l.SaveEvent(ctx); err != nil {
			return err
		}
		out = r
		if err := recordRSVP(ctx, l, now, r, r.Status); err != nil {
			return err
		}
		return recordPromotions(ctx, l, now, promoted)
	})
	if err != nil {
		return nil, nil, err
	}
	return out, ev, nil
}

// open checks that the viewer may see the event and that answers may
// still change: it is scheduled and has not started.
func open(ctx context.Context, l Locked, viewerID string, now time.Time) error {
	if err := mayRead(ctx, l, viewerID); err != nil {
		return err
	}
	e := l.Event()
	if e.Status == Cancelled {
		return errCancelled()
	}
	if e.Started(now) {
		return errStarted()
	}
	return nil
}

// leave takes an answer out of the event's counts.
func leave(e *Event, status string) {
	switch status {
	case Going:
		e.GoingCount--
	case Waitlisted:
		e.WaitlistCount--
	case Maybe:
		e.MaybeCount--
	}
}

// fill moves people from the head of the waitlist into the places that are
// free, closes the gap they leave (positions stay 1..n) and tells each of
// them. The caller saves the event and records the promotions.
func fill(ctx context.Context, l Locked, now time.Time) ([]*RSVP, error) {
	e := l.Event()
	free := e.Capacity - e.GoingCount
	if free <= 0 || e.WaitlistCount == 0 {
		return nil, nil
	}
	up, err := l.Waitlisted(ctx, free)
	if err != nil {
		return nil, err
	}
	for _, r := range up {
		r.Status, r.Position, r.GoingSince, r.UpdatedAt = Going, 0, &now, now
		if err := l.PutRSVP(ctx, r); err != nil {
			return nil, err
		}
	}
	if err := l.ShiftWaitlist(ctx, 0, len(up)); err != nil {
		return nil, err
	}
	e.GoingCount += len(up)
	e.WaitlistCount -= len(up)
	for _, r := range up {
		n := notify.New(now, r.UserID, notify.KindEventPromoted, "You're in: "+eventTitle(e),
			"A place opened up and you moved from the waitlist to going, "+whenText(e)+" at "+placeText(e)+".",
			map[string]string{"event_id": e.ID, "rsvp_id": r.ID})
		if err := l.Notify(ctx, n); err != nil {
			return nil, err
		}
	}
	return up, nil
}

func recordPromotions(ctx context.Context, l Locked, now time.Time, up []*RSVP) error {
	for _, r := range up {
		if err := recordRSVP(ctx, l, now, r, Going); err != nil {
			return err
		}
	}
	return nil
}

// remove deletes an answer, closing its waitlist gap or filling its place.
func remove(ctx context.Context, l Locked, r *RSVP, now time.Time) ([]*RSVP, error) {
	e := l.Event()
	leave(e, r.Status)
	if err := l.DeleteRSVP(ctx, r.ID); err != nil {
		return nil, err
	}
	var promoted []*RSVP
	switch r.Status {
	case Waitlisted:
		if err := l.ShiftWaitlist(ctx, r.Position, 1); err != nil {
			return nil, err
		}
	case Going:
		if e.Status == Scheduled {
			var err error
			if promoted, err = fill(ctx, l, now); err != nil {
				return nil, err
			}
		}
	}
	e.UpdatedAt = now
	return promoted, l.SaveEvent(ctx)
}

// Withdraw deletes the viewer's answer.
func (s *Service) Withdraw(ctx context.Context, viewerID, eventID string) error {
	return s.with(ctx, eventID, func(l Locked) error {
		now := s.clock.Now()
		if err := open(ctx, l, viewerID, now); err != nil {
			return err
		}
		r, err := l.RSVP(ctx, viewerID)
		if err != nil {
			return err
		}
		if r == nil {
			return apperr.NotFoundf("you have not answered this event")
		}
		promoted, err := remove(ctx, l, r, now)
		if err != nil {
			return err
		}
		r.UpdatedAt = now
		if err := recordRSVP(ctx, l, now, r, Withdrawn); err != nil {
			return err
		}
		return recordPromotions(ctx, l, now, promoted)
	})
}

// RemoveAttendee lets the creator take someone off the event.
func (s *Service) RemoveAttendee(ctx context.Context, viewerID, eventID, userID string) error {
	return s.with(ctx, eventID, func(l Locked) error {
		now := s.clock.Now()
		if err := mustManage(ctx, l, viewerID); err != nil {
			return err
		}
		if err := open(ctx, l, viewerID, now); err != nil {
			return err
		}
		r, err := l.RSVP(ctx, userID)
		if err != nil {
			return err
		}
		if r == nil {
			return apperr.NotFoundf("%q has not answered this event", userID)
		}
		promoted, err := remove(ctx, l, r, now)
		if err != nil {
			return err
		}
		e := l.Event()
		if userID != viewerID {
			n := notify.New(now, userID, notify.KindEventUpdated, "Removed from "+eventTitle(e),
				"The organiser took you off the list of "+eventTitle(e)+".", map[string]string{"event_id": e.ID})
			if err := l.Notify(ctx, n); err != nil {
				return err
			}
		}
		r.UpdatedAt = now
		if err := recordRSVP(ctx, l, now, r, Removed); err != nil {
			return err
		}
		return recordPromotions(ctx, l, now, promoted)
	})
}

// MyRSVP returns the viewer's answer to an event they may see.
func (s *Service) MyRSVP(ctx context.Context, viewerID, eventID string) (*RSVP, error) {
	if _, err := s.Get(ctx, viewerID, eventID); err != nil {
		return nil, err
	}
	r, err := s.store.RSVPOf(ctx, eventID, viewerID)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, apperr.NotFoundf("you have not answered this event")
	}
	return r, nil
}

// EraseAttendee withdraws an erased account's answer, inside the erasure's
// transaction: the waitlist moves up as if they had withdrawn. Answers to
// events that have started are simply deleted (the counts stay, as history).
func EraseAttendee(ctx context.Context, l Locked, userID string, at time.Time) error {
	r, err := l.RSVP(ctx, userID)
	if err != nil || r == nil {
		return err
	}
	if l.Event().Started(at) {
		return l.DeleteRSVP(ctx, r.ID)
	}
	promoted, err := remove(ctx, l, r, at)
	if err != nil {
		return err
	}
	return recordPromotions(ctx, l, at, promoted)
}

// EraseCreator removes what an erased account wrote into its event and
// cancels it if it has not started; attendees are told.
func EraseCreator(ctx context.Context, l Locked, at time.Time) error {
	e := l.Event()
	e.Title, e.Description, e.Location, e.Latitude, e.Longitude, e.UpdatedAt = "", "", "", nil, nil, at
	if e.Status == Scheduled && !e.Started(at) {
		return cancel(ctx, l, at, "The organiser's account was deleted.")
	}
	return l.SaveEvent(ctx)
}
