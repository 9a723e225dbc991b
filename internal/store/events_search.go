package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/matchpoint-api/matchpoint/internal/events"
)

// sqlArgs numbers the arguments of a query built piece by piece.
type sqlArgs struct {
	list []any
	// hide writes placeholders as +$n (SQLite only), which keeps their
	// values from the planner: SQLite (built with STAT4) otherwise plans a
	// prepared statement again each time it runs with values it compared
	// with an index's samples, parsing and planning the whole query
	// anew. A query whose plan cannot depend on the values hides them.
	hide bool
}

// add appends v and returns its placeholder.
func (a *sqlArgs) add(v any) string {
	a.list = append(a.list, v)
	if a.hide {
		return "+$" + strconv.Itoa(len(a.list))
	}
	return "$" + strconv.Itoa(len(a.list))
}

// kmPerDegree is the length of a degree of latitude.
const kmPerDegree = 111.195

// distanceKM is the distance in km between an event and a point, on the
// equirectangular projection at their mean latitude: within the 500 km a
// search may span it is off by well under 1 %, needs no function whose
// domain a rounding error could leave (asin of 1.0000001 fails on
// PostgreSQL), and is the same expression on both engines.
func distanceKM(lat, lon string) string {
	return fmt.Sprintf(`(%g * sqrt(power(e.latitude - %s, 2) + power((e.longitude - %s) * cos(radians((e.latitude + %s) / 2)), 2)))`,
		kmPerDegree, lat, lon, lat)
}

// nearWhere restricts to events within radius km of c: a bounding box the
// (latitude, longitude) index serves, then the distance itself.
//
// latitude is how the query names the column: noIndex(e.latitude) when the
// scan should rather follow start times.
func nearWhere(a *sqlArgs, c events.Point, radius float64, latitude string) (where []string, dist string) {
	lat, lon := a.add(c.Lat), a.add(c.Lon)
	dist = distanceKM(lat, lon)
	dLat := radius / kmPerDegree
	where = append(where, latitude+` BETWEEN `+a.add(c.Lat-dLat)+` AND `+a.add(c.Lat+dLat))
	// Longitude degrees shrink towards the poles; near one, or across the
	// antimeridian, the box would wrap, so only the distance decides.
	if edge := math.Abs(c.Lat) + dLat; edge < 89 {
		dLon := radius / (kmPerDegree * math.Cos(edge*math.Pi/180))
		if c.Lon-dLon > -180 && c.Lon+dLon < 180 {
			where = append(where, `e.longitude BETWEEN `+a.add(c.Lon-dLon)+` AND `+a.add(c.Lon+dLon))
		}
	}
	where = append(where, dist+` <= `+a.add(radius))
	return where, dist
}

// searchVector is the PostgreSQL full-text document of an event (a stored
// generated column with a GIN index).
const searchVector = `e.search_vector`

// searchPlaceVector is the PostgreSQL full-text document of an event with
// its place's grid cells as words (a GIN index of the expression).
const searchPlaceVector = `(e.search_vector || to_tsvector('simple', e.place_cells))`

// textMatch joins or filters on full text, per engine, and returns the
// rank expression (lower is better) for sort=relevance and whether the
// full-text index drives the query (it then yields few rows).
//
// On SQLite the words must appear in the title or description (a column
// filter), and near a place also in one of the place's cells, so the index
// itself intersects words and place. Driven by the index, the query reads
// only those events; otherwise (words anywhere, sorted by start time or
// distance) the matches are a set that the time-ordered scan probes.
//
// PostgreSQL does the same near a place, with the GIN index of words and
// cells together: the words and one of the cells, which every event within
// the radius has. The words are then tested again on the title and
// description alone (a cell could be a word of the query), through the
// function behind @@, which no index serves: the planner would otherwise
// intersect the words' whole posting list with the matches.
func (s *Events) textMatch(a *sqlArgs, q *events.Query) (from, where, rank string, drives bool) {
	var cells []string
	if q.Center != nil {
		cells = cellsNear(*q.Center, q.RadiusKM)
	}
	if s.db.Dialect == Postgres {
		tq := `plainto_tsquery('english', ` + a.add(strings.Join(q.Terms, " ")) + `)`
		rank := `(-ts_rank(` + searchVector + `, ` + tq + `))`
		if len(cells) == 0 {
			return `events e`, searchVector + ` @@ ` + tq, rank, false
		}
		near := searchPlaceVector + ` @@ (` + tq + ` && to_tsquery('simple', ` + a.add(strings.Join(cells, " | ")) + `))`
		return `events e`, near + ` AND ts_match_vq(` + searchVector + `, ` + tq + `)`, rank, true
	}
	// Every term must appear; quoted, so nothing in them is syntax.
	quoted := make([]string, len(q.Terms))
	for i, t := range q.Terms {
		quoted[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	match := `{title description} : (` + strings.Join(quoted, " ") + `)`
	if len(cells) > 0 {
		match += ` AND place_cells : (` + strings.Join(cells, " OR ") + `)`
	}
	m := a.add(match)
	if len(cells) == 0 && q.Sort != events.SortRelevance {
		return `events e`, s.noIndex(`e.seq`) + ` IN (SELECT rowid FROM events_fts WHERE events_fts MATCH ` + m + `)`, ``, false
	}
	// CROSS JOIN makes SQLite read the index's matches first: the other
	// order would run the full-text query once per event.
	return `events_fts CROSS JOIN events e ON e.seq = events_fts.rowid`, `events_fts MATCH ` + m, `bm25(events_fts, 10.0, 2.0, 0.0)`, true
}

// noIndex keeps SQLite's planner from driving a search by this column's
// index (a unary plus makes the term an expression). Sorted by start time,
// the scan that pays is the one that follows start times in the
// events_upcoming index and checks place and text from the index entry, so
// it stops after a page; SQLite's estimates prefer reading every event in
// the box, or every text match, and sorting them. PostgreSQL's planner
// combines the indexes itself (a bitmap AND) and is left alone.
func (s *Events) noIndex(col string) string {
	if s.db.Dialect == SQLite {
		return `+` + col
	}
	return col
}

// visibleTo restricts to events the viewer may see: public, or their own,
// or invited; never a creator they blocked or who blocked them.
func visibleTo(a *sqlArgs, viewerID string) string {
	v := a.add(viewerID)
	return `(e.visibility = 'public' OR e.creator_id = ` + v + ` OR EXISTS (SELECT 1 FROM event_invitations i WHERE i.event_id = e.id AND i.user_id = ` + v + `))
		AND (e.creator_id = ` + v + ` OR ` + notBlocked("e.creator_id", v) + `)`
}

// Search runs a discovery query.
func (s *Events) Search(ctx context.Context, q *events.Query, limit int) ([]events.Found, error) {
	a := &sqlArgs{}
	from := `events e`
	rank, text, textDrives := "", "", false
	if len(q.Terms) > 0 {
		from, text, rank, textDrives = s.textMatch(a, q)
	}
	// Driven by SQLite's full-text index, the plan is fixed: the index's
	// matches, each event by its key, the rest tested on the row.
	a.hide = textDrives && s.db.Dialect == SQLite
	// SQLite tests the terms in the order written: cheap comparisons on
	// the index entry first, the text set and the visibility subqueries on
	// what passes them.
	where := []string{`e.status = 'scheduled'`, `e.starts_at >= ` + a.add(micros(q.From))}
	if q.To != nil {
		where = append(where, `e.starts_at < `+a.add(micros(*q.To)))
	}
	if q.Sport != "" {
		where = append(where, `e.sport = `+a.add(q.Sport))
	}
	if q.SeriesID != "" {
		where = append(where, `e.series_id = `+a.add(q.SeriesID))
	}
	if q.FreeSpots != nil {
		if *q.FreeSpots {
			where = append(where, `e.going_count < e.max_participants`)
		} else {
			where = append(where, `e.going_count >= e.max_participants`)
		}
	}
	if q.SkillRank >= 0 {
		r := a.add(q.SkillRank)
		where = append(where, `(e.skill_min IS NULL OR e.skill_min <= `+r+`) AND (e.skill_max IS NULL OR e.skill_max >= `+r+`)`)
	}
	dist := `NULL`
	if q.Center != nil {
		var w []string
		lat := `e.latitude`
		if q.Sort == events.SortStart || textDrives {
			lat = s.noIndex(lat)
		}
		if textDrives && s.db.Dialect == Postgres {
			// PostgreSQL estimates the box as a latitude range times a
			// longitude range, far too few events where they gather, and
			// would rather read them all than the text index's matches.
			lat = `(e.latitude + 0)`
		}
		w, dist = nearWhere(a, *q.Center, q.RadiusKM, lat)
		where = append(where, w...)
	}
	if text != "" {
		where = append(where, text)
	}
	where = append(where, visibleTo(a, q.ViewerID))
	key := `e.starts_at`
	switch q.Sort {
	case events.SortDistance:
		key = dist
	case events.SortRelevance:
		key = rank
	}
	if q.After != nil {
		var k string
		if q.Sort == events.SortStart {
			k = a.add(int64(q.After.Key))
		} else {
			k = a.add(q.After.Key)
		}
		id := a.add(q.After.ID)
		where = append(where, `(`+key+` > `+k+` OR (`+key+` = `+k+` AND e.id > `+id+`))`)
	}
	query := `SELECT ` + sportsEventColumns + `, ` + dist + `, ` + key + ` FROM ` + from + ` WHERE ` + strings.Join(where, ` AND `) +
		` ORDER BY ` + key + `, e.id LIMIT ` + a.add(limit+1)
	return s.found(ctx, query, a.list)
}

// searchRows runs a search. On PostgreSQL it runs as an unnamed statement
// (its description cached, still one round trip), so it is planned for its
// values every time: a named prepared statement switches after five runs to
// a generic plan that reads every event in the box and computes each one's
// text vector, where the plan for the actual values intersects the text and
// place indexes (ten times faster). Planning costs well under a
// millisecond. SQLite's plans do not depend on the values, so its statement
// stays prepared.
func (s *Events) searchRows(ctx context.Context, query string, args []any) (*sql.Rows, error) {
	if s.db.Dialect == Postgres {
		return s.db.DB.QueryContext(ctx, query, append([]any{pgx.QueryExecModeCacheDescribe}, args...)...)
	}
	return s.db.QueryContext(ctx, query, args...)
}

func (s *Events) found(ctx context.Context, query string, args []any) ([]events.Found, error) {
	rows, err := s.searchRows(ctx, query, args)
	if err != nil {
		return nil, fmt.Errorf("store: search events: %w", err)
	}
	defer rows.Close()
	var out []events.Found
	for rows.Next() {
		var dist sql.NullFloat64
		var f events.Found
		e, err := scanSportsEvent(rows, &dist, &f.Key)
		if err != nil {
			return nil, fmt.Errorf("store: search events: %w", err)
		}
		f.Event = e
		if dist.Valid {
			d := math.Round(dist.Float64*100) / 100
			f.DistanceKM = &d
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// Candidates lists events a recommendation may pick from, soonest first.
func (s *Events) Candidates(ctx context.Context, c *events.CandidateQuery) ([]events.Found, error) {
	a := &sqlArgs{}
	v := a.add(c.ViewerID)
	where := []string{`e.status = 'scheduled'`, `e.starts_at >= ` + a.add(micros(c.From)), `e.starts_at < ` + a.add(micros(c.To)),
		`e.creator_id <> ` + v, `NOT EXISTS (SELECT 1 FROM event_rsvps r WHERE r.event_id = e.id AND r.user_id = ` + v + `)`,
		visibleTo(a, c.ViewerID)}
	if len(c.Sports) > 0 {
		ph := make([]string, len(c.Sports))
		for i, sp := range c.Sports {
			ph[i] = a.add(sp)
		}
		where = append(where, `e.sport IN (`+strings.Join(ph, ", ")+`)`)
	}
	w, dist := nearWhere(a, c.Center, c.RadiusKM, `e.latitude`)
	where = append(where, w...)
	query := `SELECT ` + sportsEventColumns + `, ` + dist + `, e.starts_at FROM events e WHERE ` + strings.Join(where, ` AND `) +
		` ORDER BY e.starts_at, e.id LIMIT ` + a.add(c.Limit)
	return s.found(ctx, query, a.list)
}

// UserEvents lists a user's events: created, or answered going,
// waitlisted or maybe; upcoming (not ended) soonest first, or past latest
// first.
func (s *Events) UserEvents(ctx context.Context, q *events.MineQuery) ([]*events.Mine, error) {
	a := &sqlArgs{}
	u := a.add(q.UserID)
	var sets []string
	if q.Role != "attendee" {
		sets = append(sets, `SELECT id FROM events WHERE creator_id = `+u)
	}
	if q.Role != "creator" {
		sets = append(sets, `SELECT event_id FROM event_rsvps WHERE user_id = `+u+` AND status IN ('going', 'waitlisted', 'maybe')`)
	}
	where := []string{`e.id IN (` + strings.Join(sets, ` UNION `) + `)`}
	order, cmp := `e.starts_at, e.id`, `>`
	if q.Upcoming {
		where = append(where, `e.ends_at > `+a.add(micros(q.Now)))
	} else {
		where = append(where, `e.ends_at <= `+a.add(micros(q.Now)))
		order, cmp = `e.starts_at DESC, e.id DESC`, `<`
	}
	if q.After != nil {
		k, id := a.add(int64(q.After.Key)), a.add(q.After.ID)
		where = append(where, `(e.starts_at `+cmp+` `+k+` OR (e.starts_at = `+k+` AND e.id `+cmp+` `+id+`))`)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+sportsEventColumns+`, COALESCE(r.status, '') FROM events e
		LEFT JOIN event_rsvps r ON r.event_id = e.id AND r.user_id = `+u+`
		WHERE `+strings.Join(where, ` AND `)+` ORDER BY `+order+` LIMIT `+a.add(q.Limit+1), a.list...)
	if err != nil {
		return nil, fmt.Errorf("store: user events: %w", err)
	}
	defer rows.Close()
	var out []*events.Mine
	for rows.Next() {
		m := &events.Mine{}
		if m.Event, err = scanSportsEvent(rows, &m.Status); err != nil {
			return nil, fmt.Errorf("store: user events: %w", err)
		}
		m.Role = "attendee"
		if m.Event.CreatorID == q.UserID {
			m.Role = "creator"
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// statusRank orders attendee lists; it matches events.StatusRank.
const statusRank = `(CASE r.status WHEN 'going' THEN 0 WHEN 'waitlisted' THEN 1 WHEN 'maybe' THEN 2 ELSE 3 END)`

// Attendees lists an event's answers as the viewer may see them.
func (s *Events) Attendees(ctx context.Context, q *events.AttendeeQuery) ([]*events.Attendee, error) {
	a := &sqlArgs{}
	ev, v := a.add(q.EventID), a.add(q.ViewerID)
	where := []string{`r.event_id = ` + ev, `u.deleted_at IS NULL`, `(r.user_id = ` + v + ` OR ` + notBlocked(v, "r.user_id") + `)`}
	if !q.Creator {
		// Only profiles visible to every member show to other attendees.
		where = append(where, `(r.user_id = `+v+` OR u.profile_visibility = 'members')`)
	}
	if q.Status != "" {
		where = append(where, `r.status = `+a.add(q.Status))
	}
	if c := q.After; c != nil {
		rk, pos, id := a.add(c.Rank), a.add(c.Position), a.add(c.ID)
		where = append(where, `(`+statusRank+` > `+rk+` OR (`+statusRank+` = `+rk+` AND (COALESCE(r.waitlist_position, 0) > `+pos+
			` OR (COALESCE(r.waitlist_position, 0) = `+pos+` AND r.id > `+id+`))))`)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+rsvpColumns+`, u.username, u.first_name, u.last_name,
		EXISTS (SELECT 1 FROM event_checkins c WHERE c.event_id = r.event_id AND c.user_id = r.user_id)
		FROM event_rsvps r JOIN users u ON u.id = r.user_id
		WHERE `+strings.Join(where, ` AND `)+`
		ORDER BY `+statusRank+`, COALESCE(r.waitlist_position, 0), r.id LIMIT `+a.add(q.Limit+1), a.list...)
	if err != nil {
		return nil, fmt.Errorf("store: attendees: %w", err)
	}
	defer rows.Close()
	var out []*events.Attendee
	for rows.Next() {
		at := &events.Attendee{}
		r, err := scanRSVP(rows, &at.User.Username, &at.User.FirstName, &at.User.LastName, &at.CheckedIn)
		if err != nil {
			return nil, fmt.Errorf("store: attendees: %w", err)
		}
		at.RSVP, at.User.ID = *r, r.UserID
		out = append(out, at)
	}
	return out, rows.Err()
}

// Invitations lists an event's invitations in user id order.
func (s *Events) Invitations(ctx context.Context, eventID, after string, limit int) ([]*events.Invitation, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT event_id, user_id, inviter_id, created_at FROM event_invitations
		WHERE event_id = $1 AND user_id > $2 ORDER BY user_id LIMIT $3`, eventID, after, limit+1)
	if err != nil {
		return nil, fmt.Errorf("store: invitations: %w", err)
	}
	defer rows.Close()
	var out []*events.Invitation
	for rows.Next() {
		var inv events.Invitation
		var created int64
		if err := rows.Scan(&inv.EventID, &inv.UserID, &inv.InviterID, &created); err != nil {
			return nil, fmt.Errorf("store: invitations: %w", err)
		}
		inv.CreatedAt = fromMicros(created)
		out = append(out, &inv)
	}
	return out, rows.Err()
}
