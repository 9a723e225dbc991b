package events

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// Service is the events domain.
type Service struct {
	store   Store
	clock   clock.Clock
	geo     Geocoder
	matches MatchGraph
}

// Options are the domain's optional collaborators.
type Options struct {
	// Geocoder places location labels; nil: coordinates only as sent.
	Geocoder Geocoder
	// Matches counts accepted matches going to events; nil: none.
	Matches MatchGraph
}

// NewService returns the events domain over st.
func NewService(st Store, c clock.Clock, o Options) *Service {
	return &Service{store: st, clock: c, geo: o.Geocoder, matches: o.Matches}
}

// SetGeocoder and SetMatchGraph connect collaborators assembled later.
func (s *Service) SetGeocoder(g Geocoder)     { s.geo = g }
func (s *Service) SetMatchGraph(m MatchGraph) { s.matches = m }

// Draft is what creating an event takes.
type Draft struct {
	Title           string
	Description     string
	Sport           string
	Location        string
	Latitude        *float64
	Longitude       *float64
	Date            time.Time
	EndDate         *time.Time // default: Date + DefaultDuration
	Timezone        string     // default: the creator's profile time zone
	MaxParticipants int
	SkillMin        string
	SkillMax        string
	Visibility      string // default: public
	Recurrence      string // an RRULE; "" for a one-off event
}

func errNoEvent(id string) error { return apperr.NotFoundf("no event %q", id) }

// Create validates d and creates the event, or every occurrence of its
// recurrence (each an event of its own, sharing the first one's id as
// series_id). It answers the first occurrence.
func (s *Service) Create(ctx context.Context, creatorID string, d Draft) (*Event, error) {
	now := s.clock.Now()
	e := &Event{ID: ids.New(ids.SportsEvent), CreatorID: creatorID, Status: Scheduled, CreatedAt: now, UpdatedAt: now}
	var err error
	if e.Title, err = cleanTitle(d.Title); err != nil {
		return nil, err
	}
	if err := wire.CheckText("description", d.Description, MaxDescription, true); err != nil {
		return nil, err
	}
	e.Description = strings.TrimSpace(d.Description)
	if e.Sport, err = normalizeSport("sport", d.Sport); err != nil {
		return nil, err
	}
	if e.Location, err = cleanLocation(d.Location); err != nil {
		return nil, err
	}
	if err := checkCoordinates(d.Latitude, d.Longitude); err != nil {
		return nil, err
	}
	e.Latitude, e.Longitude = d.Latitude, d.Longitude
	if e.Latitude == nil {
		e.Latitude, e.Longitude = s.place(e.Location)
	}
	if err := checkCapacity(d.MaxParticipants); err != nil {
		return nil, err
	}
	e.Capacity = d.MaxParticipants
	if err := checkSkillRange(d.SkillMin, d.SkillMax); err != nil {
		return nil, err
	}
	e.SkillMin, e.SkillMax = d.SkillMin, d.SkillMax
	e.Visibility = d.Visibility
	if e.Visibility == "" {
		e.Visibility = Public
	}
	if err := checkVisibility(e.Visibility); err != nil {
		return nil, err
	}
	e.Timezone = d.Timezone
	if e.Timezone == "" {
		v, err := s.store.Viewer(ctx, creatorID)
		if err != nil {
			return nil, err
		}
		e.Timezone = v.Timezone
	}
	loc, err := loadZone(e.Timezone)
	if err != nil {
		return nil, err
	}
	e.Timezone = loc.String()
	e.Start = d.Date.UTC().Truncate(time.Second)
	e.End = e.Start.Add(DefaultDuration)
	if d.EndDate != nil {
		e.End = d.EndDate.UTC().Truncate(time.Second)
	}
	if err := checkTimes(e.Start, e.End, now); err != nil {
		return nil, err
	}
	all := []*Event{e}
	if strings.TrimSpace(d.Recurrence) != "" {
		rule, err := ParseRule(d.Recurrence)
		if err != nil {
			return nil, err
		}
		starts, err := rule.Expand(e.Start, loc)
		if err != nil {
			return nil, err
		}
		if last := starts[len(starts)-1]; last.After(now.Add(MaxAhead)) {
			return nil, badRule("every occurrence must start within two years")
		}
		e.SeriesID, e.Recurrence = e.ID, rule.String()
		length := e.End.Sub(e.Start)
		for _, st := range starts[1:] {
			o := *e
			o.ID, o.Start, o.End = ids.New(ids.SportsEvent), st, st.Add(length)
			all = append(all, &o)
		}
	}
	out := make([]*outbox.Event, len(all))
	for i, ev := range all {
		oe, err := outbox.New(now, outbox.EventCreated, creatorID, "event", PayloadOf(ev))
		if err != nil {
			return nil, err
		}
		out[i] = &oe
	}
	if err := s.store.CreateEvents(ctx, all, out); err != nil {
		return nil, err
	}
	return e, nil
}

func cleanTitle(t string) (string, error) {
	t = strings.TrimSpace(t)
	if err := required("title", t); err != nil {
		return "", err
	}
	return t, wire.CheckText("title", t, MaxTitle, false)
}

func cleanLocation(l string) (string, error) {
	l = strings.TrimSpace(l)
	if err := required("location", l); err != nil {
		return "", err
	}
	return l, wire.CheckText("location", l, MaxLocation, false)
}

// place geocodes a label, when a geocoder is connected.
func (s *Service) place(label string) (lat, lon *float64) {
	if s.geo == nil || label == "" {
		return nil, nil
	}
	la, lo, ok := s.geo.Geocode(label)
	if !ok {
		return nil, nil
	}
	return &la, &lo
}

// canSee is the visibility rule: the creator always; nobody the creator
// blocked or who blocked the creator; anyone for a public event; for an
// invite-only one, invitees (and anyone who answered before it became
// invite-only, who were invited then).
func canSee(e *Event, viewerID string, a Access) bool {
	if e.CreatorID == viewerID {
		return true
	}
	if a.Blocked {
		return false
	}
	return e.Visibility == Public || a.Invited || a.HasRSVP
}

// mayRead applies canSee to a locked event.
func mayRead(ctx context.Context, l Locked, viewerID string) error {
	e := l.Event()
	if e.CreatorID == viewerID {
		return nil
	}
	blocked, err := l.Blocked(ctx, e.CreatorID, viewerID)
	if err != nil {
		return err
	}
	a := Access{Blocked: blocked}
	if e.Visibility == InviteOnly && !blocked {
		if a.Invited, err = l.Invited(ctx, viewerID); err != nil {
			return err
		}
		if !a.Invited {
			r, err := l.RSVP(ctx, viewerID)
			if err != nil {
				return err
			}
			a.HasRSVP = r != nil
		}
	}
	if !canSee(e, viewerID, a) {
		return errNoEvent(e.ID)
	}
	return nil
}

// mustManage is mayRead plus being the creator.
func mustManage(ctx context.Context, l Locked, viewerID string) error {
	if err := mayRead(ctx, l, viewerID); err != nil {
		return err
	}
	if l.Event().CreatorID != viewerID {
		return apperr.Forbiddenf("not_event_creator", "only the event's creator may do this")
	}
	return nil
}

func errCancelled() error {
	return apperr.Conflictf("event_cancelled", "", "the event is cancelled")
}

func errStarted() error {
	return apperr.Conflictf("event_started", "", "the event has already started")
}

// Get returns an event the viewer may see.
func (s *Service) Get(ctx context.Context, viewerID, id string) (*Event, error) {
	if !ids.Valid(ids.SportsEvent, id) {
		return nil, errNoEvent(id)
	}
	e, a, err := s.store.ViewEvent(ctx, id, viewerID)
	if err != nil {
		return nil, err
	}
	if !canSee(e, viewerID, a) {
		return nil, errNoEvent(id)
	}
	return e, nil
}

// with runs fn on the locked event after checking the id's shape.
func (s *Service) with(ctx context.Context, id string, fn func(l Locked) error) error {
	if !ids.Valid(ids.SportsEvent, id) {
		return errNoEvent(id)
	}
	return s.store.WithEvent(ctx, id, fn)
}

// Opt is a PATCH field that may be absent, null (clear it) or a value.
type Opt[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// Patch changes some fields of an event: nil and unset fields stay.
type Patch struct {
	Title           *string
	Description     *string
	Sport           *string
	Location        *string
	Latitude        Opt[float64]
	Longitude       Opt[float64]
	Date            *time.Time
	EndDate         *time.Time
	Timezone        *string
	MaxParticipants *int
	SkillMin        Opt[string]
	SkillMax        Opt[string]
	Visibility      *string
}

// timed reports whether the patch moves the event in time, which a
// series-wide change may not.
func (p *Patch) timed() bool { return p.Date != nil || p.EndDate != nil || p.Timezone != nil }

// change is what applying a patch did.
type change struct {
	any           bool
	timeOrPlace   bool
	moved         bool // the start changed: reminders start over
	grew          bool // capacity went up: the waitlist may move
	nowInviteOnly bool
}

// apply validates p against e at now and changes e.
func (s *Service) apply(e *Event, p *Patch, now time.Time) (change, error) {
	var c change
	n := *e // work on a copy; e changes only if everything validates
	if p.Title != nil {
		t, err := cleanTitle(*p.Title)
		if err != nil {
			return c, err
		}
		n.Title = t
	}
	if p.Description != nil {
		if err := wire.CheckText("description", *p.Description, MaxDescription, true); err != nil {
			return c, err
		}
		n.Description = strings.TrimSpace(*p.Description)
	}
	if p.Sport != nil {
		sp, err := normalizeSport("sport", *p.Sport)
		if err != nil {
			return c, err
		}
		n.Sport = sp
	}
	if p.Latitude.Set || p.Longitude.Set {
		if p.Latitude.Set != p.Longitude.Set || p.Latitude.Null != p.Longitude.Null {
			param := "longitude"
			if !p.Latitude.Set {
				param = "latitude"
			}
			return c, apperr.InvalidParam(param, "incomplete_coordinates", "latitude and longitude are set or cleared together")
		}
		if p.Latitude.Null {
			n.Latitude, n.Longitude = nil, nil
		} else {
			lat, lon := p.Latitude.Value, p.Longitude.Value
			if err := checkCoordinates(&lat, &lon); err != nil {
				return c, err
			}
			n.Latitude, n.Longitude = &lat, &lon
		}
	}
	if p.Location != nil {
		l, err := cleanLocation(*p.Location)
		if err != nil {
			return c, err
		}
		if l != n.Location && !p.Latitude.Set {
			// The old coordinates belong to the old place.
			n.Latitude, n.Longitude = s.place(l)
		}
		n.Location = l
	}
	if p.Timezone != nil {
		loc, err := loadZone(*p.Timezone)
		if err != nil {
			return c, err
		}
		n.Timezone = loc.String()
	}
	if p.Date != nil || p.EndDate != nil {
		if p.Date != nil {
			n.Start = p.Date.UTC().Truncate(time.Second)
			n.End = n.Start.Add(e.End.Sub(e.Start)) // keeps its length unless end_date says otherwise
		}
		if p.EndDate != nil {
			n.End = p.EndDate.UTC().Truncate(time.Second)
		}
		if err := checkTimes(n.Start, n.End, now); err != nil {
			return c, err
		}
	}
	if p.MaxParticipants != nil {
		if err := checkCapacity(*p.MaxParticipants); err != nil {
			return c, err
		}
		if *p.MaxParticipants < n.GoingCount {
			return c, apperr.Conflictf("capacity_below_going", "max_participants",
				"%d people are going; max_participants cannot be lower", n.GoingCount)
		}
		n.Capacity = *p.MaxParticipants
	}
	if p.SkillMin.Set {
		n.SkillMin = p.SkillMin.Value
		if p.SkillMin.Null {
			n.SkillMin = ""
		}
	}
	if p.SkillMax.Set {
		n.SkillMax = p.SkillMax.Value
		if p.SkillMax.Null {
			n.SkillMax = ""
		}
	}
	if err := checkSkillRange(n.SkillMin, n.SkillMax); err != nil {
		return c, err
	}
	if p.Visibility != nil {
		if err := checkVisibility(*p.Visibility); err != nil {
			return c, err
		}
		n.Visibility = *p.Visibility
	}
	c.moved = !n.Start.Equal(e.Start)
	c.timeOrPlace = c.moved || !n.End.Equal(e.End) || n.Location != e.Location || !sameCoord(n.Latitude, e.Latitude) || !sameCoord(n.Longitude, e.Longitude)
	c.grew = n.Capacity > e.Capacity
	c.nowInviteOnly = n.Visibility == InviteOnly && e.Visibility != InviteOnly
	c.any = c.timeOrPlace || c.grew || n.Capacity != e.Capacity || n.Title != e.Title || n.Description != e.Description ||
		n.Sport != e.Sport || n.Timezone != e.Timezone || n.SkillMin != e.SkillMin || n.SkillMax != e.SkillMax || n.Visibility != e.Visibility
	*e = n
	return c, nil
}

func sameCoord(a, b *float64) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// Update changes an event; only its creator may, until it starts.
// Attendees hear of a change of time or place; a larger capacity moves
// people up from the waitlist.
func (s *Service) Update(ctx context.Context, viewerID, id string, p Patch) (*Event, error) {
	var out *Event
	err := s.with(ctx, id, func(l Locked) error {
		if err := mustManage(ctx, l, viewerID); err != nil {
			return err
		}
		e, err := s.update(ctx, l, &p)
		out = e
		return err
	})
	return out, err
}

func (s *Service) update(ctx context.Context, l Locked, p *Patch) (*Event, error) {
	now := s.clock.Now()
	e := l.Event()
	if e.Status == Cancelled {
		return nil, errCancelled()
	}
	if e.Started(now) {
		return nil, errStarted()
	}
	before := *e
	c, err := s.apply(e, p, now)
	if err != nil {
		return nil, err
	}
	if !c.any {
		return e, nil
	}
	e.UpdatedAt = now
	if c.moved {
		e.ReminderStage = 0
	}
	if c.nowInviteOnly {
		// Those who answered keep the event they answered.
		if err := l.InviteAttendees(ctx, e.CreatorID, now); err != nil {
			return nil, err
		}
	}
	var promoted []*RSVP
	if c.grew {
		if promoted, err = fill(ctx, l, now); err != nil {
			return nil, err
		}
	}
	if err := l.SaveEvent(ctx); err != nil {
		return nil, err
	}
	if c.timeOrPlace {
		title := "Changed: " + eventTitle(e)
		body := "Now " + whenText(e) + " at " + placeText(e) + "."
		if before.Location == e.Location && before.Start.Equal(e.Start) {
			body = "Now ending at " + e.End.In(zoneOf(e)).Format("15:04 MST") + "."
		}
		if err := notifyAnswered(ctx, l, now, notify.KindEventUpdated, title, body); err != nil {
			return nil, err
		}
	}
	if err := record(ctx, l, now, outbox.EventUpdated); err != nil {
		return nil, err
	}
	if err := recordPromotions(ctx, l, now, promoted); err != nil {
		return nil, err
	}
	return e, nil
}

// Cancel cancels an event that has not started; attendees are told.
func (s *Service) Cancel(ctx context.Context, viewerID, id, reason string) (*Event, error) {
	if err := wire.CheckText("reason", reason, MaxCancelReason, true); err != nil {
		return nil, err
	}
	var out *Event
	err := s.with(ctx, id, func(l Locked) error {
		if err := mustManage(ctx, l, viewerID); err != nil {
			return err
		}
		e := l.Event()
		if e.Status == Cancelled {
			return errCancelled()
		}
		if e.Started(s.clock.Now()) {
			return errStarted()
		}
		out = e
		return cancel(ctx, l, s.clock.Now(), strings.TrimSpace(reason))
	})
	return out, err
}

func cancel(ctx context.Context, l Locked, now time.Time, reason string) error {
	e := l.Event()
	e.Status, e.CancelReason, e.CancelledAt, e.UpdatedAt = Cancelled, reason, &now, now
	if err := l.SaveEvent(ctx); err != nil {
		return err
	}
	body := eventTitle(e) + " on " + whenText(e) + " will not take place."
	if reason != "" {
		body += " " + reason
	}
	if err := notifyAnswered(ctx, l, now, notify.KindEventCancelled, "Cancelled: "+eventTitle(e), body); err != nil {
		return err
	}
	return record(ctx, l, now, outbox.EventCancelled)
}

// series returns the upcoming occurrences of the series id belongs to,
// after checking the viewer may manage it.
func (s *Service) series(ctx context.Context, viewerID, id string) ([]string, error) {
	e, err := s.Get(ctx, viewerID, id)
	if err != nil {
		return nil, err
	}
	if e.CreatorID != viewerID {
		return nil, apperr.Forbiddenf("not_event_creator", "only the event's creator may do this")
	}
	if e.SeriesID == "" {
		return nil, apperr.Conflictf("not_a_series", "", "the event does not recur; change or cancel it alone")
	}
	return s.store.SeriesEvents(ctx, e.SeriesID, s.clock.Now())
}

// CancelSeries cancels every occurrence of the event's series that has not
// started, in one transaction, and answers them.
func (s *Service) CancelSeries(ctx context.Context, viewerID, id, reason string) ([]*Event, error) {
	if err := wire.CheckText("reason", reason, MaxCancelReason, true); err != nil {
		return nil, err
	}
	list, err := s.series(ctx, viewerID, id)
	if err != nil {
		return nil, err
	}
	var out []*Event
	now := s.clock.Now()
	err = s.store.WithEvents(ctx, list, func(l Locked) error {
		e := l.Event()
		if e.Status == Cancelled || e.Started(now) {
			return nil
		}
		out = append(out, e)
		return cancel(ctx, l, now, strings.TrimSpace(reason))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// UpdateSeries applies p to every occurrence of the event's series that has
// not started, in one transaction: all of them change, or none.
func (s *Service) UpdateSeries(ctx context.Context, viewerID, id string, p Patch) ([]*Event, error) {
	if p.timed() {
		return nil, apperr.InvalidParam("date", "validation_failed", "a series-wide change cannot move occurrences in time; change them one by one")
	}
	list, err := s.series(ctx, viewerID, id)
	if err != nil {
		return nil, err
	}
	var out []*Event
	now := s.clock.Now()
	err = s.store.WithEvents(ctx, list, func(l Locked) error {
		e := l.Event()
		if e.Status == Cancelled || e.Started(now) {
			return nil
		}
		e, err := s.update(ctx, l, &p)
		if err != nil {
			return err
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Invite lets users see and join an invite-only (or public) event. Only
// the creator invites, until the event ends. Inviting someone twice is not
// an error; the answer lists every invitation asked for.
func (s *Service) Invite(ctx context.Context, viewerID, id string, userIDs []string) ([]*Invitation, error) {
	if len(userIDs) == 0 {
		return nil, apperr.InvalidParam("user_ids", "validation_failed", "user_ids must name at least one user")
	}
	if len(userIDs) > MaxInvitees {
		return nil, apperr.InvalidParam("user_ids", "too_many", "at most %d users at a time", MaxInvitees)
	}
	var out []*Invitation
	err := s.with(ctx, id, func(l Locked) error {
		if err := mustManage(ctx, l, viewerID); err != nil {
			return err
		}
		now := s.clock.Now()
		e := l.Event()
		if e.Status == Cancelled {
			return errCancelled()
		}
		if now.After(e.End) {
			return apperr.Conflictf("event_ended", "", "the event is over")
		}
		seen := map[string]bool{}
		for i, u := range userIDs {
			param := "user_ids[" + strconv.Itoa(i) + "]"
			if !ids.Valid(ids.User, u) {
				return apperr.InvalidParam(param, "unknown_user", "%q is not a user id", u)
			}
			if u == viewerID || seen[u] {
				continue
			}
			seen[u] = true
			inv := &Invitation{EventID: e.ID, UserID: u, InviterID: viewerID, CreatedAt: now}
			if _, err := l.Invite(ctx, inv); err != nil {
				if apperr.IsKind(err, apperr.NotFound) {
					return apperr.InvalidParam(param, "unknown_user", "no user %q", u)
				}
				return err
			}
			out = append(out, inv)
		}
		return nil
	})
	return out, err
}

// Invitations lists an event's invitations, for its creator.
func (s *Service) Invitations(ctx context.Context, viewerID, id, after string, limit int) ([]*Invitation, error) {
	e, err := s.Get(ctx, viewerID, id)
	if err != nil {
		return nil, err
	}
	if e.CreatorID != viewerID {
		return nil, apperr.Forbiddenf("not_event_creator", "only the event's creator may do this")
	}
	if after != "" && !ids.Valid(ids.User, after) {
		return nil, apperr.InvalidParam("cursor", "invalid_cursor", "cursor is not one this list returned")
	}
	return s.store.Invitations(ctx, id, after, limit)
}
