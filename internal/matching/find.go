package matching

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/sports"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// Criteria are the match search criteria (API document, section 2) plus
// paging.
type Criteria struct {
	Sports      []string // default: the caller's sports
	SkillLevel  string   // default: the caller's level in each sport
	MaxDistance float64  // kilometres; default: the caller's travel radius
	Limit       int
	Cursor      string
	// ByDistance ranks by distance alone: the baseline of the ranking quality
	// check, not offered by the API.
	ByDistance bool
}

// Candidate is one recommendation.
type Candidate struct {
	User       *users.User
	Result     Result
	DistanceKM int
	profile    Profile
	id         string // the candidate's, which ranks before User is read
}

// stages are the search radii, in km: a search reads the nearest ring first
// and widens until it has enough rows or reaches the maximum distance.
var stages = []float64{25, 100, 400, 1000}

// Find returns recommendations for userID: everyone who passes the hard
// filters, best score first, then nearest, then by id.
func (s *Service) Find(ctx context.Context, userID string, c Criteria) ([]*Candidate, bool, error) {
	// The caller's profile and who to leave out are independent reads: run
	// them side by side (on PostgreSQL, two round trips for the price of one).
	now := s.clock.Now()
	var excluded Excluded
	var exErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		excluded, exErr = s.store.Excluded(ctx, userID, now, now.Add(-s.cfg.DeclineCooldown))
	}()
	ps, err := s.store.Profiles(ctx, []string{userID})
	<-done
	if err != nil {
		return nil, false, err
	}
	if exErr != nil {
		return nil, false, exErr
	}
	me := ps[userID]
	if me == nil {
		return nil, false, apperr.NotFoundf("no user %q", userID)
	}
	if me.Latitude == nil || me.Longitude == nil {
		return nil, false, apperr.InvalidParam("location", "location_required",
			"your profile has no position: set location to a place name (PATCH /v1/users/me {\"location\": \"Lyon, France\"}) or send latitude and longitude")
	}
	want, err := requestedSports(c.Sports, me)
	if err != nil {
		return nil, false, err
	}
	if c.SkillLevel != "" && SkillRank(c.SkillLevel) == 0 {
		return nil, false, apperr.InvalidParam("skill_level", "invalid_skill_level", "skill_level must be one of %s", strings.Join(users.SkillLevels, ", "))
	}
	maxDist := me.TravelRadiusKM
	if c.MaxDistance != 0 {
		maxDist = c.MaxDistance
	}
	if !(maxDist > 0 && maxDist <= users.MaxTravelRadius) {
		return nil, false, apperr.InvalidParam("max_distance", "out_of_range", "max_distance must be more than 0 and at most %d (kilometres)", users.MaxTravelRadius)
	}
	after, err := parseCursor(c.Cursor)
	if err != nil {
		return nil, false, err
	}
	// The skill each sport allows: one step either side of the level asked,
	// or of the caller's own level in that sport.
	allowed := map[string][2]int{}
	for _, sp := range want {
		lvl := SkillRank(c.SkillLevel)
		if lvl == 0 {
			lvl = SkillRank(me.SkillLevels[sp])
		}
		if lvl == 0 {
			allowed[sp] = [2]int{0, 4}
		} else {
			allowed[sp] = [2]int{lvl - 1, lvl + 1}
		}
	}

	mine := ProfileOf(me, now)
	// The candidates live in one slice, indexed by id: a search scores up to
	// s.cfg.Candidates of them, and needs no allocation of its own for each
	// (nor an account to hold its id) to rank them.
	var found []Candidate
	var best map[string]int
	read, inner := 0, 0.0
	for _, radius := range stages {
		radius = math.Min(radius, maxDist)
		rows, err := s.store.Candidates(ctx, want, Ranges(mine.Lat, mine.Lon, radius, inner), s.cfg.Candidates-read)
		if err != nil {
			return nil, false, err
		}
		read += len(rows)
		if best == nil {
			best = make(map[string]int, len(rows))
		}
		for i := range rows {
			row := &rows[i]
			id := row.Profile.UserID
			if _, dup := best[id]; dup || id == userID || excluded[id] || row.PendingIn >= s.cfg.PendingCap {
				continue
			}
			if a := allowed[row.Sport]; row.Skill != 0 && (row.Skill < a[0] || row.Skill > a[1]) {
				continue
			}
			d := DistanceKM(mine.Lat, mine.Lon, row.Profile.Lat, row.Profile.Lon)
			if d > maxDist || d > row.Profile.RadiusKM {
				continue
			}
			res := score(&mine, &row.Profile, now, false)
			best[id] = len(found)
			found = append(found, Candidate{Result: res, DistanceKM: RoundKM(d), profile: row.Profile, id: id})
		}
		inner = radius
		if read >= s.cfg.Candidates || radius >= maxDist {
			break
		}
	}

	list := make([]*Candidate, 0, len(found))
	for i := range found {
		if c := &found[i]; after == nil || after.before(c) {
			list = append(list, c)
		}
	}
	if c.ByDistance {
		slices.SortFunc(list, func(a, b *Candidate) int {
			if a.Result.DistanceKM != b.Result.DistanceKM {
				return cmpFloat(a.Result.DistanceKM, b.Result.DistanceKM)
			}
			return strings.Compare(a.id, b.id)
		})
	} else {
		slices.SortFunc(list, compare)
	}
	limit := c.Limit
	more := len(list) > limit
	if more {
		list = list[:limit]
	}
	if len(list) == 0 {
		return list, false, nil
	}
	idsOf := make([]string, len(list))
	for i, c := range list {
		idsOf[i] = c.id
	}
	// Showings are counted while the profiles are read: a candidate whose
	// account went in between counts once for nothing.
	var impErr error
	done = make(chan struct{})
	go func() {
		defer close(done)
		impErr = s.store.RecordImpressions(ctx, userID, idsOf, now, s.cfg.SuppressAfter, s.cfg.SuppressFor)
	}()
	profiles, err := s.store.Profiles(ctx, idsOf)
	<-done
	if err != nil {
		return nil, false, err
	}
	if impErr != nil {
		return nil, false, impErr
	}
	out := list[:0]
	for _, c := range list {
		if u := profiles[c.id]; u != nil {
			c.User = u
			c.Result = Score(&mine, &c.profile, now)
			c.Result.Explain(&c.profile, now)
			out = append(out, c)
		}
	}
	return out, more, nil
}

func requestedSports(in []string, me *users.User) ([]string, error) {
	if len(in) == 0 {
		if len(me.Sports) == 0 {
			return nil, apperr.InvalidParam("sports", "sports_required", "send sports, or add sports to your profile (PATCH /v1/users/me)")
		}
		return slices.Clone(me.Sports), nil
	}
	var out []string
	for i, s := range in {
		n, ok := sports.Normalize(s)
		if !ok {
			return nil, apperr.InvalidParam(fmt.Sprintf("sports[%d]", i), "unknown_sport", "%q is not a known sport; GET /v1/sports lists them", s)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

func cmpFloat(a, b float64) int {
	if a < b {
		return -1
	}
	return 1
}

// compare orders recommendations: best score, then nearest, then id.
func compare(a, b *Candidate) int {
	if a.Result.Score != b.Result.Score {
		return b.Result.Score - a.Result.Score
	}
	if a.DistanceKM != b.DistanceKM {
		return a.DistanceKM - b.DistanceKM
	}
	return strings.Compare(a.id, b.id)
}

// position is where a page ended: the cursor of the next one.
type position struct {
	score, km int
	id        string
}

func (p *position) before(c *Candidate) bool {
	return compare(&Candidate{Result: Result{Score: p.score}, DistanceKM: p.km, id: p.id}, c) < 0
}

// CursorOf is the cursor that continues after c.
func CursorOf(c *Candidate) string {
	return base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("%d:%d:%s", c.Result.Score, c.DistanceKM, c.User.ID)))
}

func parseCursor(s string) (*position, error) {
	if s == "" {
		return nil, nil
	}
	bad := apperr.InvalidParam("cursor", "invalid_cursor", "cursor is not one this search returned")
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, bad
	}
	parts := strings.SplitN(string(raw), ":", 3)
	if len(parts) != 3 {
		return nil, bad
	}
	score, err1 := strconv.Atoi(parts[0])
	km, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || !strings.HasPrefix(parts[2], "usr_") {
		return nil, bad
	}
	return &position{score: score, km: km, id: parts[2]}, nil
}
