package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/matching"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// Matching implements matching.Store.
type Matching struct {
	db  *DB
	imp impressionQueue
}

// NewMatching returns the matching store over db.
func NewMatching(db *DB) *Matching { return &Matching{db: db} }

var _ matching.Store = (*Matching)(nil)

func init() {
	// An erased account's matches go: the other person's history loses the
	// entry, and requests they were waiting on disappear with it.
	registerEraser("matches", []string{"user1_id", "user2_id"}, func(ctx context.Context, tx *sql.Tx, e erasure) error {
		others, err := queryStrings(ctx, tx, `SELECT user2_id FROM matches WHERE user1_id = $1 AND status = 'pending'`, e.UserID)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM matches WHERE user1_id = $1 OR user2_id = $1`, e.UserID); err != nil {
			return err
		}
		return refreshPending(ctx, tx, others...)
	})
	registerEraser("match_impressions", []string{"viewer_id", "candidate_id"}, func(ctx context.Context, tx *sql.Tx, e erasure) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM match_impressions WHERE viewer_id = $1 OR candidate_id = $1`, e.UserID)
		return err
	})
}

func queryStrings(ctx context.Context, tx *sql.Tx, q string, args ...any) ([]string, error) {
	return queryColumn[string](ctx, tx, q, args...)
}

// queryColumn runs a query of one column in tx.
func queryColumn[T any](ctx context.Context, tx *sql.Tx, q string, args ...any) ([]T, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return scanColumn[T](rows)
}

// pairKey is the two ids in order: one key per pair, whoever asked.
func pairKey(a, b string) string {
	if a > b {
		a, b = b, a
	}
	return a + ":" + b
}

const matchColumns = `id, user1_id, user2_id, sport, message, compatibility_score, common_sports, status, created_at, updated_at, expires_at, closed_at`

func scanMatch(row scanner) (*matching.Match, error) {
	var m matching.Match
	var common string
	var created, updated, expires int64
	var closed sql.NullInt64
	if err := row.Scan(&m.ID, &m.User1ID, &m.User2ID, &m.Sport, &m.Message, &m.Score, &common, &m.Status,
		&created, &updated, &expires, &closed); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(common), &m.Common); err != nil {
		return nil, fmt.Errorf("store: match %s common sports: %w", m.ID, err)
	}
	m.CreatedAt, m.UpdatedAt, m.ExpiresAt, m.ClosedAt = fromMicros(created), fromMicros(updated), fromMicros(expires), fromNullMicros(closed)
	return &m, nil
}

// Candidates reads index rows in the cell ranges. The ranges come as a
// VALUES list joined to the index, one statement per search stage on both
// engines.
func (s *Matching) Candidates(ctx context.Context, sports []string, ranges []matching.CellRange, limit int) ([]matching.Indexed, error) {
	if len(sports) == 0 || len(ranges) == 0 || limit <= 0 {
		return nil, nil
	}
	const cols = `m.sport, m.user_id, m.skill, m.latitude, m.longitude, m.radius_km, m.levels, m.availability, m.active_at, m.pending_in`
	var rows *sql.Rows
	var err error
	if s.db.Dialect == Postgres {
		// Arrays keep one statement text for every search, so PostgreSQL
		// plans it once per connection instead of once per search.
		los, his := make([]int64, len(ranges)), make([]int64, len(ranges))
		for i, r := range ranges {
			los[i], his[i] = r.Lo, r.Hi
		}
		// LATERAL with OFFSET 0 keeps one index range scan per cell range:
		// joined plainly, the planner may scan every row of a popular sport
		// in the hope that LIMIT stops it early.
		rows, err = s.db.QueryContext(ctx, `SELECT `+cols+` FROM unnest($1::bigint[], $2::bigint[]) AS r(lo, hi)
			CROSS JOIN LATERAL (SELECT * FROM match_index x WHERE x.sport = ANY($3::text[]) AND x.cell BETWEEN r.lo AND r.hi OFFSET 0) m
			LIMIT $4`, los, his, sports, limit)
	} else {
		rows, err = s.sqliteCandidates(ctx, cols, sports, ranges, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("store: match candidates: %w", err)
	}
	defer rows.Close()
	// A search reads up to a few thousand rows: the sport, the levels and
	// the week are read as the driver's bytes, without a copy each. The
	// sport is one of those asked for, and people's levels take few forms
	// ("tennis=2"), so rows share the strings and the decoded levels (which
	// nobody changes) instead of allocating their own.
	var out []matching.Indexed
	levelsOf := map[string]map[string]int{}
	var sport, levels, week sql.RawBytes
	var active int64
	for rows.Next() {
		var c matching.Indexed
		if err := rows.Scan(&sport, &c.Profile.UserID, &c.Skill, &c.Profile.Lat, &c.Profile.Lon, &c.Profile.RadiusKM,
			&levels, &week, &active, &c.PendingIn); err != nil {
			return nil, fmt.Errorf("store: match candidates: %w", err)
		}
		for _, sp := range sports {
			if sp == string(sport) {
				c.Sport = sp
				break
			}
		}
		if c.Sport == "" {
			c.Sport = string(sport)
		}
		lv, ok := levelsOf[string(levels)]
		if !ok {
			lv = matching.DecodeLevels(string(levels))
			levelsOf[string(levels)] = lv
		}
		c.Profile.Levels, c.Profile.Week, c.Profile.ActiveAt = lv, matching.WeekFromBytes(week), fromMicros(active)
		out = append(out, c)
	}
	return out, rows.Err()
}

// sqliteCandidates joins the ranges as a VALUES list. Its shape is rounded
// up to a few sizes, padded with ranges that match nothing, so that the
// prepared statements of the cache serve every search; the parameters are
// "?", which the driver binds without looking names up. A parameter whose
// value the planner reads makes SQLite prepare the statement again whenever
// the value changes (the parser then costs more than the search): sports
// bound in an IN list (sqlite_stat4 estimates) and a bare "LIMIT ?" do. So
// the sports come as one JSON array, and an IN over json_each walks the same
// sorted, distinct list through the same primary key ranges, in the same
// order; the limit is a CAST, an expression the planner does not evaluate.
func (s *Matching) sqliteCandidates(ctx context.Context, cols string, sports []string, ranges []matching.CellRange, limit int) (*sql.Rows, error) {
	ranges = slices.Clone(ranges)
	for len(ranges) < bucket(len(ranges)) {
		ranges = append(ranges, matching.CellRange{Lo: 1, Hi: 0})
	}
	list, err := json.Marshal(sports)
	if err != nil {
		return nil, err
	}
	args := make([]any, 0, 2*len(ranges)+2)
	var vals strings.Builder
	for i, r := range ranges {
		if i > 0 {
			vals.WriteString(", ")
		}
		vals.WriteString("(CAST(? AS BIGINT), CAST(? AS BIGINT))")
		args = append(args, r.Lo, r.Hi)
	}
	args = append(args, string(list), limit)
	return s.db.QueryContext(ctx, `SELECT `+cols+` FROM (VALUES `+vals.String()+`) AS r CROSS JOIN match_index m
		WHERE m.sport IN (SELECT value FROM json_each(?)) AND m.cell BETWEEN r.column1 AND r.column2 LIMIT CAST(? AS INTEGER)`, args...)
}

// bucket rounds a count up to a power of two (at least 2).
func bucket(n int) int {
	b := 2
	for b < n {
		b *= 2
	}
	return b
}

// Excluded gathers, in one statement, everyone a search must leave out.
// UNION ALL: the ids go into a set, so the database need not sort them to
// drop the repeats.
func (s *Matching) Excluded(ctx context.Context, userID string, now, declinedSince time.Time) (matching.Excluded, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT blocked_id FROM user_blocks WHERE blocker_id = $1
		UNION ALL SELECT blocker_id FROM user_blocks WHERE blocked_id = $1
		UNION ALL SELECT user2_id FROM matches WHERE user1_id = $1 AND (status IN ('pending', 'accepted') OR (status = 'declined' AND closed_at > $2))
		UNION ALL SELECT user1_id FROM matches WHERE user2_id = $1 AND (status IN ('pending', 'accepted') OR (status = 'declined' AND closed_at > $2))
		UNION ALL SELECT candidate_id FROM match_impressions WHERE viewer_id = $1 AND suppressed_until > $3
		UNION ALL SELECT id FROM users WHERE suspended_at IS NOT NULL AND (suspended_until IS NULL OR suspended_until > $3)`,
		userID, micros(declinedSince), micros(now))
	if err != nil {
		return nil, fmt.Errorf("store: match exclusions: %w", err)
	}
	defer rows.Close()
	out := matching.Excluded{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: match exclusions: %w", err)
		}
		out[id] = true
	}
	return out, rows.Err()
}

// RecordImpressions counts showings. Searches record theirs on every call,
// so concurrent ones share a transaction (group commit): the first to come
// writes everyone's queued showings while the others wait for it, instead of
// each taking the write lock in turn (on SQLite, waiting on the busy handler).
func (s *Matching) RecordImpressions(ctx context.Context, viewer string, candidates []string, now time.Time, after int, hold time.Duration) error {
	if len(candidates) == 0 {
		return nil
	}
	req := &impressions{viewer: viewer, candidates: candidates, now: now, after: after, hold: hold, done: make(chan error, 1)}
	s.imp.mu.Lock()
	s.imp.queue = append(s.imp.queue, req)
	lead := !s.imp.writing
	s.imp.writing = true
	s.imp.mu.Unlock()
	if lead {
		for {
			s.imp.mu.Lock()
			batch := s.imp.queue
			s.imp.queue = nil
			if len(batch) == 0 {
				s.imp.writing = false
				s.imp.mu.Unlock()
				break
			}
			s.imp.mu.Unlock()
			// The batch is written whatever becomes of this request's context;
			// one search's showings need no transaction of their own.
			var err error
			if len(batch) == 1 {
				err = batch[0].write(ctx, s.db, s.db.Dialect)
			} else {
				err = s.db.Tx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
					for _, r := range batch {
						if err := r.write(ctx, tx, s.db.Dialect); err != nil {
							return err
						}
					}
					return nil
				})
			}
			for _, r := range batch {
				r.done <- err
			}
		}
	}
	return <-req.done
}

// impressionQueue is the group commit of RecordImpressions.
type impressionQueue struct {
	mu      sync.Mutex
	queue   []*impressions
	writing bool
}

type impressions struct {
	viewer     string
	candidates []string
	now        time.Time
	after      int
	hold       time.Duration
	done       chan error
}

// write counts one search's showings in one statement; the after-th showing
// holds the candidate back and starts the count anew.
func (r *impressions) write(ctx context.Context, tx interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, d Dialect) error {
	args := []any{r.viewer, micros(r.now), r.after, micros(r.now.Add(r.hold))}
	var rows string
	if d == Postgres {
		rows, args = `SELECT $1, c, 1, $2, 0 FROM unnest($5::text[]) AS c`, append(args, r.candidates)
	} else {
		var vals strings.Builder
		for i, c := range r.candidates {
			if i > 0 {
				vals.WriteString(", ")
			}
			fmt.Fprintf(&vals, "($1, $%d, 1, $2, 0)", len(args)+1)
			args = append(args, c)
		}
		rows = `VALUES ` + vals.String()
	}
	_, err := tx.ExecContext(context.WithoutCancel(ctx), `INSERT INTO match_impressions (viewer_id, candidate_id, shown, last_shown_at, suppressed_until)
		`+rows+` ON CONFLICT (viewer_id, candidate_id) DO UPDATE SET
		shown = CASE WHEN match_impressions.shown + 1 >= $3 THEN 0 ELSE match_impressions.shown + 1 END,
		suppressed_until = CASE WHEN match_impressions.shown + 1 >= $3 THEN $4 ELSE match_impressions.suppressed_until END,
		last_shown_at = $2`, args...)
	if err != nil {
		return fmt.Errorf("store: record impressions: %w", err)
	}
	return nil
}

// Profiles reads live accounts with their sports in one statement (one row
// per sport).
func (s *Matching) Profiles(ctx context.Context, ids []string) (map[string]*users.User, error) {
	out := make(map[string]*users.User, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	// One parameter whatever the count: one statement text, prepared once
	// per connection. On SQLite, ids bound in an IN list would also make the
	// statement be prepared again on every execution (their values feed the
	// planner's sqlite_stat4 estimates); json_each hides them from it.
	in, args := `users.id = ANY($1::text[])`, []any{ids}
	if s.db.Dialect == SQLite {
		list, err := json.Marshal(ids)
		if err != nil {
			return nil, err
		}
		in, args = `users.id IN (SELECT value FROM json_each($1))`, []any{string(list)}
	}
	// One row per person, their sports gathered as a JSON array of [sport,
	// level] in profile order: joined, every sport repeated the whole account
	// row, which was read and its availability decoded each time.
	sportsOf := `(SELECT json_group_array(json_array(s.sport, s.skill_level) ORDER BY s.position) FROM user_sports s WHERE s.user_id = users.id)`
	if s.db.Dialect == Postgres {
		sportsOf = `(SELECT COALESCE(json_agg(json_build_array(s.sport, s.skill_level) ORDER BY s.position)::text, '[]') FROM user_sports s WHERE s.user_id = users.id)`
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+userColumns+`, `+sportsOf+`
		FROM users WHERE users.deleted_at IS NULL AND `+in, args...)
	if err != nil {
		return nil, fmt.Errorf("store: read profiles: %w", err)
	}
	defer rows.Close()
	var list []byte
	for rows.Next() {
		u, err := scanUser(rows, &list)
		if err != nil {
			return nil, fmt.Errorf("store: read profiles: %w", err)
		}
		var sports [][2]*string
		if err := json.Unmarshal(list, &sports); err != nil {
			return nil, fmt.Errorf("store: read profiles: %s sports: %w", u.ID, err)
		}
		u.Sports, u.SkillLevels = make([]string, 0, len(sports)), make(map[string]string, len(sports))
		for _, sl := range sports {
			if sl[0] == nil {
				continue
			}
			u.Sports = append(u.Sports, *sl[0])
			if sl[1] != nil {
				u.SkillLevels[*sl[0]] = *sl[1]
			}
		}
		out[u.ID] = u
	}
	return out, rows.Err()
}

// CreateMatch records a request.
func (s *Matching) CreateMatch(ctx context.Context, m *matching.Match, declinedSince time.Time, ev *outbox.Event, n *notify.Notification) error {
	common, err := json.Marshal(m.Common)
	if err != nil {
		return err
	}
	key := pairKey(m.User1ID, m.User2ID)
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if blocked, err := blockedEitherWay(ctx, tx, m.User1ID, m.User2ID); err != nil {
			return err
		} else if blocked {
			return apperr.NotFoundf("no user %q", m.User2ID)
		}
		var declined bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM matches WHERE pair_key = $1 AND status = 'declined' AND closed_at > $2)`,
			key, micros(declinedSince)).Scan(&declined); err != nil {
			return fmt.Errorf("store: create match: %w", err)
		}
		if declined {
			return apperr.Conflictf("recently_declined", "user_id", "a match between you was declined less than 30 days ago")
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO matches (id, user1_id, user2_id, pair_key, sport, message, compatibility_score, common_sports,
			status, created_at, updated_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			m.ID, m.User1ID, m.User2ID, key, m.Sport, m.Message, m.Score, string(common), m.Status,
			micros(m.CreatedAt), micros(m.UpdatedAt), micros(m.ExpiresAt))
		if _, dup := uniqueViolation(err); dup {
			return apperr.Conflictf("match_exists", "user_id", "you already have a pending or accepted match with this person")
		}
		if err != nil {
			return fmt.Errorf("store: create match: %w", err)
		}
		// Asking is an action: showings so far no longer count.
		if _, err := tx.ExecContext(ctx, `DELETE FROM match_impressions WHERE (viewer_id = $1 AND candidate_id = $2) OR (viewer_id = $2 AND candidate_id = $1)`,
			m.User1ID, m.User2ID); err != nil {
			return fmt.Errorf("store: create match: %w", err)
		}
		if err := refreshPending(ctx, tx, m.User2ID); err != nil {
			return err
		}
		if err := addNotification(ctx, tx, n); err != nil {
			return err
		}
		return appendEvent(ctx, tx, ev)
	})
}

// MatchByID returns a match userID is in.
func (s *Matching) MatchByID(ctx context.Context, userID, id string) (*matching.Match, error) {
	m, err := scanMatch(s.db.QueryRowContext(ctx, `SELECT `+matchColumns+` FROM matches m WHERE id = $1 AND (user1_id = $2 OR user2_id = $2)
		AND `+notBlocked("m.user1_id", "m.user2_id"), id, userID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.NotFoundf("no match %q", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get match: %w", err)
	}
	return m, nil
}

// CloseMatch moves a pending match on, under a row lock.
func (s *Matching) CloseMatch(ctx context.Context, userID, id, status string, now time.Time,
	check func(m *matching.Match) error, build func(m *matching.Match) (*outbox.Event, *notify.Notification, error)) (*matching.Match, error) {
	var out *matching.Match
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		m, err := scanMatch(tx.QueryRowContext(ctx, `SELECT `+matchColumns+` FROM matches m WHERE id = $1 AND (user1_id = $2 OR user2_id = $2)
			AND `+notBlocked("m.user1_id", "m.user2_id")+s.db.forUpdate(), id, userID))
		if errors.Is(err, sql.ErrNoRows) {
			return apperr.NotFoundf("no match %q", id)
		}
		if err != nil {
			return fmt.Errorf("store: get match: %w", err)
		}
		if err := check(m); err != nil {
			return err
		}
		m.Status, m.UpdatedAt, m.ClosedAt = status, now, &now
		if _, err := tx.ExecContext(ctx, `UPDATE matches SET status = $2, updated_at = $3, closed_at = $3 WHERE id = $1`, id, status, micros(now)); err != nil {
			return fmt.Errorf("store: close match: %w", err)
		}
		if err := refreshPending(ctx, tx, m.User2ID); err != nil {
			return err
		}
		ev, n, err := build(m)
		if err != nil {
			return err
		}
		if n != nil {
			if err := addNotification(ctx, tx, n); err != nil {
				return err
			}
		}
		out = m
		return appendEvent(ctx, tx, ev)
	})
	return out, err
}

// ListMatches pages a person's matches, newest first, leaving out those with
// someone blocked either way.
func (s *Matching) ListMatches(ctx context.Context, userID string, f matching.ListFilter) ([]*matching.Match, error) {
	where := `(m.user1_id = $1 OR m.user2_id = $1)`
	switch f.Role {
	case "sent":
		where = `m.user1_id = $1`
	case "received":
		where = `m.user2_id = $1`
	}
	args := []any{userID, f.Status, f.Before, f.Limit}
	rows, err := s.db.QueryContext(ctx, `SELECT `+matchColumns+` FROM matches m WHERE `+where+`
		AND ($2 = '' OR m.status = $2) AND ($3 = '' OR m.id < $3) AND `+notBlocked("m.user1_id", "m.user2_id")+`
		ORDER BY m.id DESC LIMIT $4`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list matches: %w", err)
	}
	defer rows.Close()
	var out []*matching.Match
	for rows.Next() {
		m, err := scanMatch(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list matches: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// MatchStats counts a person's matches by side and status.
func (s *Matching) MatchStats(ctx context.Context, userID string) (*matching.Stats, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT CASE WHEN user1_id = $1 THEN 'sent' ELSE 'received' END, status, COUNT(*), SUM(compatibility_score)
		FROM matches WHERE user1_id = $1 OR user2_id = $1 GROUP BY 1, 2`, userID)
	if err != nil {
		return nil, fmt.Errorf("store: match stats: %w", err)
	}
	st := &matching.Stats{}
	acceptedN, acceptedSum := 0, int64(0)
	for rows.Next() {
		var side, status string
		var n int
		var sum int64
		if err := rows.Scan(&side, &status, &n, &sum); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: match stats: %w", err)
		}
		t := &st.Sent
		if side == "received" {
			t = &st.Received
		}
		t.Total += n
		switch status {
		case matching.StatusPending:
			t.Pending += n
		case matching.StatusAccepted:
			t.Accepted += n
			acceptedN += n
			acceptedSum += sum
		case matching.StatusDeclined:
			t.Declined += n
		case matching.StatusExpired:
			t.Expired += n
		case matching.StatusCancelled:
			t.Cancelled += n
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if acceptedN > 0 {
		avg := float64(acceptedSum) / float64(acceptedN)
		st.AverageScore = &avg
	}
	rows, err = s.db.QueryContext(ctx, `SELECT common_sports FROM matches WHERE (user1_id = $1 OR user2_id = $1) AND status = 'accepted'`, userID)
	if err != nil {
		return nil, fmt.Errorf("store: match stats: %w", err)
	}
	defer rows.Close()
	count := map[string]int{}
	for rows.Next() {
		var raw string
		var list []string
		if err := rows.Scan(&raw); err != nil {
			return nil, err
		}
		if json.Unmarshal([]byte(raw), &list) == nil {
			for _, sp := range list {
				count[sp]++
			}
		}
	}
	for sp, n := range count {
		st.TopSports = append(st.TopSports, matching.SportCount{Sport: sp, Count: n})
	}
	sort.Slice(st.TopSports, func(i, j int) bool {
		a, b := st.TopSports[i], st.TopSports[j]
		return a.Count > b.Count || (a.Count == b.Count && a.Sport < b.Sport)
	})
	if len(st.TopSports) > 5 {
		st.TopSports = st.TopSports[:5]
	}
	return st, rows.Err()
}

// ExpireDue expires pending matches past their time. PostgreSQL: rows
// another node is expiring are skipped (SKIP LOCKED); on both engines the
// UPDATE only takes rows still pending, so each expiry and its event happen
// once.
func (s *Matching) ExpireDue(ctx context.Context, now time.Time, limit int, build func(m *matching.Match) (*outbox.Event, *notify.Notification, error)) (int, error) {
	done := 0
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		pick := `SELECT id FROM matches WHERE status = 'pending' AND expires_at < $1 ORDER BY expires_at LIMIT $2`
		if s.db.Dialect == Postgres {
			pick += ` FOR UPDATE SKIP LOCKED`
		}
		due, err := queryStrings(ctx, tx, pick, micros(now), limit)
		if err != nil {
			return fmt.Errorf("store: due matches: %w", err)
		}
		var invited []string
		for _, id := range due {
			m, err := scanMatch(tx.QueryRowContext(ctx, `UPDATE matches SET status = 'expired', updated_at = $2, closed_at = $2
				WHERE id = $1 AND status = 'pending' AND expires_at < $2 RETURNING `+matchColumns, id, micros(now)))
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return fmt.Errorf("store: expire match: %w", err)
			}
			ev, n, err := build(m)
			if err != nil {
				return err
			}
			if err := addNotification(ctx, tx, n); err != nil {
				return err
			}
			if err := appendEvent(ctx, tx, ev); err != nil {
				return err
			}
			if !slices.Contains(invited, m.User2ID) {
				invited = append(invited, m.User2ID)
			}
			done++
		}
		return refreshPending(ctx, tx, invited...)
	})
	if err != nil {
		return 0, err
	}
	return done, nil
}

// Matched reports an accepted match between a and b.
func (s *Matching) Matched(ctx context.Context, a, b string) (bool, error) {
	var ok bool
	err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM matches WHERE pair_key = $1 AND status = 'accepted')`, pairKey(a, b)).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("store: read matches: %w", err)
	}
	return ok, nil
}
