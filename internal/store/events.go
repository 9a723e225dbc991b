package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/events"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// Events implements events.Store.
type Events struct{ db *DB }

// NewEvents returns the events store over db.
func NewEvents(db *DB) *Events { return &Events{db: db} }

var _ events.Store = (*Events)(nil)

const sportsEventColumns = `e.id, e.creator_id, COALESCE(e.series_id, ''), e.recurrence, e.title, e.description, e.sport,
	e.location, e.latitude, e.longitude, e.starts_at, e.ends_at, e.timezone, e.max_participants, e.skill_min, e.skill_max,
	e.visibility, e.status, e.cancel_reason, e.going_count, e.waitlist_count, e.maybe_count, e.attended_count,
	e.attended_going_count, e.reminder_stage, e.created_at, e.updated_at, e.cancelled_at`

// Skill levels are stored as their rank, so that "suits an intermediate"
// is a range comparison.
func skillOf(n sql.NullInt64) string {
	if !n.Valid || n.Int64 < 0 || int(n.Int64) >= len(users.SkillLevels) {
		return ""
	}
	return users.SkillLevels[n.Int64]
}

func skillRankOf(level string) sql.NullInt64 {
	i := slices.Index(users.SkillLevels, level)
	if i < 0 {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: int64(i), Valid: true}
}

func scanSportsEvent(row scanner, extra ...any) (*events.Event, error) {
	var e events.Event
	var lat, lon sql.NullFloat64
	var smin, smax, cancelled sql.NullInt64
	var start, end, created, updated int64
	dest := append([]any{&e.ID, &e.CreatorID, &e.SeriesID, &e.Recurrence, &e.Title, &e.Description, &e.Sport,
		&e.Location, &lat, &lon, &start, &end, &e.Timezone, &e.Capacity, &smin, &smax,
		&e.Visibility, &e.Status, &e.CancelReason, &e.GoingCount, &e.WaitlistCount, &e.MaybeCount, &e.AttendedCount,
		&e.AttendedGoing, &e.ReminderStage, &created, &updated, &cancelled}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	if lat.Valid && lon.Valid {
		e.Latitude, e.Longitude = &lat.Float64, &lon.Float64
	}
	e.SkillMin, e.SkillMax = skillOf(smin), skillOf(smax)
	e.Start, e.End, e.CreatedAt, e.UpdatedAt = fromMicros(start), fromMicros(end), fromMicros(created), fromMicros(updated)
	e.CancelledAt = fromNullMicros(cancelled)
	return &e, nil
}

// CreateEvents inserts events and their outbox events in one transaction.
func (s *Events) CreateEvents(ctx context.Context, evs []*events.Event, out []*outbox.Event) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		for _, e := range evs {
			if err := insertSportsEvent(ctx, tx, e); err != nil {
				return err
			}
		}
		for _, ev := range out {
			if err := appendEvent(ctx, tx, ev); err != nil {
				return err
			}
		}
		return nil
	})
}

func insertSportsEvent(ctx context.Context, tx *sql.Tx, e *events.Event) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO events (id, creator_id, series_id, recurrence, title, description, sport,
		location, latitude, longitude, place_cells, starts_at, ends_at, timezone, max_participants, skill_min, skill_max, visibility,
		status, cancel_reason, created_at, updated_at)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22)`,
		e.ID, e.CreatorID, nullString(e.SeriesID), e.Recurrence, e.Title, e.Description, e.Sport,
		e.Location, nullFloat(e.Latitude), nullFloat(e.Longitude), placeCells(e.Latitude, e.Longitude), micros(e.Start), micros(e.End),
		e.Timezone, e.Capacity, skillRankOf(e.SkillMin), skillRankOf(e.SkillMax), e.Visibility, e.Status, e.CancelReason,
		micros(e.CreatedAt), micros(e.UpdatedAt))
	if err != nil {
		return fmt.Errorf("store: create event: %w", err)
	}
	return nil
}

// ViewEvent reads an event and the viewer's access to it in one query.
func (s *Events) ViewEvent(ctx context.Context, id, viewerID string) (*events.Event, events.Access, error) {
	var a events.Access
	e, err := scanSportsEvent(s.db.QueryRowContext(ctx, `SELECT `+sportsEventColumns+`,
		EXISTS (SELECT 1 FROM event_invitations i WHERE i.event_id = e.id AND i.user_id = $2),
		NOT `+notBlocked("e.creator_id", "$2")+`,
		EXISTS (SELECT 1 FROM event_rsvps r WHERE r.event_id = e.id AND r.user_id = $2)
		FROM events e WHERE e.id = $1`, id, viewerID), &a.Invited, &a.Blocked, &a.HasRSVP)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, a, apperr.NotFoundf("no event %q", id)
	}
	if err != nil {
		return nil, a, fmt.Errorf("store: get event: %w", err)
	}
	return e, a, nil
}

// RSVPOf returns a user's answer to an event, or nil.
func (s *Events) RSVPOf(ctx context.Context, eventID, userID string) (*events.RSVP, error) {
	r, err := scanRSVP(s.db.QueryRowContext(ctx, `SELECT `+rsvpColumns+` FROM event_rsvps r WHERE r.event_id = $1 AND r.user_id = $2`, eventID, userID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: get rsvp: %w", err)
	}
	return r, nil
}

// WithEvent runs fn with the event's row locked until the transaction ends.
func (s *Events) WithEvent(ctx context.Context, id string, fn func(l events.Locked) error) error {
	return s.WithEvents(ctx, []string{id}, fn)
}

// WithEvents locks each event in id order and runs fn on it, all in one
// transaction. A missing event is apperr NotFound.
func (s *Events) WithEvents(ctx context.Context, ids []string, fn func(l events.Locked) error) error {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			l, err := lockSportsEvent(ctx, tx, id, s.db.forUpdate())
			if err != nil {
				return err
			}
			if err := fn(l); err != nil {
				return err
			}
		}
		return nil
	})
}

// lockSportsEvent reads an event with the row-lock suffix lock (FOR UPDATE
// on PostgreSQL; nothing on SQLite, whose IMMEDIATE transaction already
// holds the database's write lock).
func lockSportsEvent(ctx context.Context, tx *sql.Tx, id, lock string) (*lockedEvent, error) {
	e, err := scanSportsEvent(tx.QueryRowContext(ctx, `SELECT `+sportsEventColumns+` FROM events e WHERE e.id = $1`+lock, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.NotFoundf("no event %q", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: lock event: %w", err)
	}
	return &lockedEvent{tx: tx, e: e}, nil
}

// SeriesEvents lists a series' occurrences that start after from.
func (s *Events) SeriesEvents(ctx context.Context, seriesID string, from time.Time) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM events WHERE series_id = $1 AND starts_at > $2 ORDER BY starts_at`, seriesID, micros(from))
	if err != nil {
		return nil, fmt.Errorf("store: series: %w", err)
	}
	return scanStrings(rows)
}

// Viewer reads the profile facts discovery needs.
func (s *Events) Viewer(ctx context.Context, userID string) (*events.Viewer, error) {
	v := &events.Viewer{ID: userID, Sports: map[string]string{}}
	var lat, lon sql.NullFloat64
	err := s.db.QueryRowContext(ctx, `SELECT timezone, latitude, longitude, travel_radius_km FROM users WHERE id = $1 AND deleted_at IS NULL`,
		userID).Scan(&v.Timezone, &lat, &lon, &v.RadiusKM)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.NotFoundf("no user %q", userID)
	}
	if err != nil {
		return nil, fmt.Errorf("store: read viewer: %w", err)
	}
	if lat.Valid && lon.Valid {
		v.Latitude, v.Longitude = &lat.Float64, &lon.Float64
	}
	rows, err := s.db.QueryContext(ctx, `SELECT sport, COALESCE(skill_level, '') FROM user_sports WHERE user_id = $1`, userID)
	if err != nil {
		return nil, fmt.Errorf("store: read viewer: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var sport, level string
		if err := rows.Scan(&sport, &level); err != nil {
			return nil, err
		}
		v.Sports[sport] = level
	}
	return v, rows.Err()
}

const rsvpColumns = `r.id, r.event_id, r.user_id, r.status, COALESCE(r.waitlist_position, 0), r.going_since, r.created_at, r.updated_at`

func scanRSVP(row scanner, extra ...any) (*events.RSVP, error) {
	var r events.RSVP
	var since sql.NullInt64
	var created, updated int64
	if err := row.Scan(append([]any{&r.ID, &r.EventID, &r.UserID, &r.Status, &r.Position, &since, &created, &updated}, extra...)...); err != nil {
		return nil, err
	}
	r.GoingSince, r.CreatedAt, r.UpdatedAt = fromNullMicros(since), fromMicros(created), fromMicros(updated)
	return &r, nil
}

// lockedEvent is events.Locked over a transaction holding the event's lock.
type lockedEvent struct {
	tx *sql.Tx
	e  *events.Event
}

func (l *lockedEvent) Event() *events.Event { return l.e }

func (l *lockedEvent) SaveEvent(ctx context.Context) error {
	e := l.e
	_, err := l.tx.ExecContext(ctx, `UPDATE events SET title = $2, description = $3, sport = $4, location = $5, latitude = $6,
		longitude = $7, starts_at = $8, ends_at = $9, timezone = $10, max_participants = $11, skill_min = $12, skill_max = $13,
		visibility = $14, status = $15, cancel_reason = $16, going_count = $17, waitlist_count = $18, maybe_count = $19,
		attended_count = $20, attended_going_count = $21, reminder_stage = $22, updated_at = $23, cancelled_at = $24,
		place_cells = $25 WHERE id = $1`,
		e.ID, e.Title, e.Description, e.Sport, e.Location, nullFloat(e.Latitude), nullFloat(e.Longitude),
		micros(e.Start), micros(e.End), e.Timezone, e.Capacity, skillRankOf(e.SkillMin), skillRankOf(e.SkillMax),
		e.Visibility, e.Status, e.CancelReason, e.GoingCount, e.WaitlistCount, e.MaybeCount,
		e.AttendedCount, e.AttendedGoing, e.ReminderStage, micros(e.UpdatedAt), nullMicros(e.CancelledAt),
		placeCells(e.Latitude, e.Longitude))
	if err != nil {
		return fmt.Errorf("store: save event: %w", err)
	}
	return followEvent(ctx, l.tx, e.ID, e.CreatorID, e.UpdatedAt) // the event's conversation follows who is going
}

func (l *lockedEvent) RSVP(ctx context.Context, userID string) (*events.RSVP, error) {
	r, err := scanRSVP(l.tx.QueryRowContext(ctx, `SELECT `+rsvpColumns+` FROM event_rsvps r WHERE r.event_id = $1 AND r.user_id = $2`, l.e.ID, userID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: get rsvp: %w", err)
	}
	return r, nil
}

func (l *lockedEvent) rsvps(ctx context.Context, q string, args ...any) ([]*events.RSVP, error) {
	rows, err := l.tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list rsvps: %w", err)
	}
	defer rows.Close()
	var out []*events.RSVP
	for rows.Next() {
		r, err := scanRSVP(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list rsvps: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func (l *lockedEvent) RSVPs(ctx context.Context, statuses ...string) ([]*events.RSVP, error) {
	args := []any{l.e.ID}
	for _, st := range statuses {
		args = append(args, st)
	}
	return l.rsvps(ctx, `SELECT `+rsvpColumns+` FROM event_rsvps r WHERE r.event_id = $1 AND r.status IN (`+placeholders(2, len(statuses))+`)
		ORDER BY COALESCE(r.waitlist_position, 0), r.id`, args...)
}

func (l *lockedEvent) Waitlisted(ctx context.Context, n int) ([]*events.RSVP, error) {
	return l.rsvps(ctx, `SELECT `+rsvpColumns+` FROM event_rsvps r WHERE r.event_id = $1 AND r.status = 'waitlisted'
		ORDER BY r.waitlist_position LIMIT $2`, l.e.ID, n)
}

func nullPosition(p int) sql.NullInt64 {
	return sql.NullInt64{Int64: int64(p), Valid: p > 0}
}

func (l *lockedEvent) PutRSVP(ctx context.Context, r *events.RSVP) error {
	_, err := l.tx.ExecContext(ctx, `INSERT INTO event_rsvps (id, event_id, user_id, status, waitlist_position, going_since, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (id) DO UPDATE SET status = excluded.status, waitlist_position = excluded.waitlist_position,
		going_since = excluded.going_since, updated_at = excluded.updated_at`,
		r.ID, r.EventID, r.UserID, r.Status, nullPosition(r.Position), nullMicros(r.GoingSince), micros(r.CreatedAt), micros(r.UpdatedAt))
	if err != nil {
		return fmt.Errorf("store: save rsvp: %w", err)
	}
	return nil
}

func (l *lockedEvent) DeleteRSVP(ctx context.Context, id string) error {
	if _, err := l.tx.ExecContext(ctx, `DELETE FROM event_rsvps WHERE id = $1`, id); err != nil {
		return fmt.Errorf("store: delete rsvp: %w", err)
	}
	return nil
}

func (l *lockedEvent) ShiftWaitlist(ctx context.Context, after, places int) error {
	if places <= 0 {
		return nil
	}
	_, err := l.tx.ExecContext(ctx, `UPDATE event_rsvps SET waitlist_position = waitlist_position - $3
		WHERE event_id = $1 AND status = 'waitlisted' AND waitlist_position > $2`, l.e.ID, after, places)
	if err != nil {
		return fmt.Errorf("store: renumber waitlist: %w", err)
	}
	return nil
}

func (l *lockedEvent) Audience(ctx context.Context) ([]string, error) {
	rows, err := l.tx.QueryContext(ctx, `SELECT user_id FROM event_rsvps WHERE event_id = $1
		UNION SELECT user_id FROM event_invitations WHERE event_id = $1`, l.e.ID)
	if err != nil {
		return nil, fmt.Errorf("store: event audience: %w", err)
	}
	list, err := scanStrings(rows)
	if err != nil {
		return nil, fmt.Errorf("store: event audience: %w", err)
	}
	slices.Sort(list)
	out := []string{l.e.CreatorID}
	for _, u := range list {
		if u != l.e.CreatorID {
			out = append(out, u)
		}
	}
	return out, nil
}

func (l *lockedEvent) Invited(ctx context.Context, userID string) (bool, error) {
	var ok bool
	err := l.tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM event_invitations WHERE event_id = $1 AND user_id = $2)`, l.e.ID, userID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("store: read invitation: %w", err)
	}
	return ok, nil
}

func (l *lockedEvent) Invite(ctx context.Context, inv *events.Invitation) (bool, error) {
	var ok bool
	err := l.tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE id = $1 AND deleted_at IS NULL AND role <> 'system')
		AND `+notBlocked("$1", "$2"), inv.UserID, inv.InviterID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("store: check invitee: %w", err)
	}
	if !ok {
		return false, apperr.NotFoundf("no user %q", inv.UserID)
	}
	res, err := l.tx.ExecContext(ctx, `INSERT INTO event_invitations (event_id, user_id, inviter_id, created_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (event_id, user_id) DO NOTHING`, inv.EventID, inv.UserID, inv.InviterID, micros(inv.CreatedAt))
	if err != nil {
		return false, fmt.Errorf("store: invite: %w", err)
	}
	n, _ := res.RowsAffected()
	if n == 0 {
		var created int64
		if err := l.tx.QueryRowContext(ctx, `SELECT inviter_id, created_at FROM event_invitations WHERE event_id = $1 AND user_id = $2`,
			inv.EventID, inv.UserID).Scan(&inv.InviterID, &created); err != nil {
			return false, fmt.Errorf("store: read invitation: %w", err)
		}
		inv.CreatedAt = fromMicros(created)
	}
	return n > 0, nil
}

func (l *lockedEvent) InviteAttendees(ctx context.Context, inviterID string, at time.Time) error {
	_, err := l.tx.ExecContext(ctx, `INSERT INTO event_invitations (event_id, user_id, inviter_id, created_at)
		SELECT event_id, user_id, $2, $3 FROM event_rsvps WHERE event_id = $1 AND user_id <> $2
		ON CONFLICT (event_id, user_id) DO NOTHING`, l.e.ID, inviterID, micros(at))
	if err != nil {
		return fmt.Errorf("store: invite attendees: %w", err)
	}
	return nil
}

func (l *lockedEvent) Blocked(ctx context.Context, a, b string) (bool, error) {
	return blockedEitherWay(ctx, l.tx, a, b)
}

func (l *lockedEvent) CheckIn(ctx context.Context, c *events.CheckIn) (bool, error) {
	res, err := l.tx.ExecContext(ctx, `INSERT INTO event_checkins (event_id, user_id, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (event_id, user_id) DO NOTHING`, c.EventID, c.UserID, micros(c.CreatedAt))
	if err != nil {
		return false, fmt.Errorf("store: check in: %w", err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return true, nil
	}
	var created int64
	if err := l.tx.QueryRowContext(ctx, `SELECT created_at FROM event_checkins WHERE event_id = $1 AND user_id = $2`, c.EventID, c.UserID).Scan(&created); err != nil {
		return false, fmt.Errorf("store: read check-in: %w", err)
	}
	c.CreatedAt = fromMicros(created)
	return false, nil
}

func (l *lockedEvent) CheckedIn(ctx context.Context, userID string) (bool, error) {
	var ok bool
	err := l.tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM event_checkins WHERE event_id = $1 AND user_id = $2)`, l.e.ID, userID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("store: read check-in: %w", err)
	}
	return ok, nil
}

func (l *lockedEvent) Record(ctx context.Context, ev *outbox.Event) error {
	return appendEvent(ctx, l.tx, ev)
}

func (l *lockedEvent) Notify(ctx context.Context, n *notify.Notification) error {
	return addNotification(ctx, l.tx, n)
}

func init() {
	// An erased account's events lose what it wrote and, when still to
	// come, are cancelled (attendees are told); its answers are withdrawn
	// with the waitlist moving up; its check-ins and invitations go.
	registerEraser("events", []string{"creator_id"}, func(ctx context.Context, tx *sql.Tx, e erasure) error {
		if err := eraseEventsWhere(ctx, tx, e, `SELECT id FROM events WHERE creator_id = $1`, events.EraseCreator); err != nil {
			return err
		}
		return retitleEventConversations(ctx, tx, e.UserID, e.At)
	})
	registerEraser("event_rsvps", []string{"user_id"}, func(ctx context.Context, tx *sql.Tx, e erasure) error {
		return eraseEventsWhere(ctx, tx, e, `SELECT event_id FROM event_rsvps WHERE user_id = $1`,
			func(ctx context.Context, l events.Locked, at time.Time) error {
				return events.EraseAttendee(ctx, l, e.UserID, at)
			})
	})
	deleteRowsOf("event_checkins", "user_id")
	registerEraser("event_invitations", []string{"user_id", "inviter_id"}, func(ctx context.Context, tx *sql.Tx, e erasure) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM event_invitations WHERE user_id = $1 OR inviter_id = $1`, e.UserID)
		return err
	})
}

// eraseEventsWhere locks each event the query lists (in id order) and runs
// fn on it. The lock is an UPDATE of the row, which needs no knowledge of
// the engine: it waits for any RSVP transaction on the event, as FOR UPDATE
// would.
func eraseEventsWhere(ctx context.Context, tx *sql.Tx, e erasure, query string,
	fn func(ctx context.Context, l events.Locked, at time.Time) error) error {
	rows, err := tx.QueryContext(ctx, query, e.UserID)
	if err != nil {
		return err
	}
	list, err := scanStrings(rows)
	if err != nil {
		return err
	}
	slices.Sort(list)
	list = slices.Compact(list)
	for _, id := range list {
		if _, err := tx.ExecContext(ctx, `UPDATE events SET updated_at = $2 WHERE id = $1`, id, micros(e.At)); err != nil {
			return err
		}
		l, err := lockSportsEvent(ctx, tx, id, "")
		if err != nil {
			return err
		}
		if err := fn(ctx, l, e.At); err != nil {
			return err
		}
	}
	return nil
}
