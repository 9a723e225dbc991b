package events

import (
	"context"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/ids"
)

// Sort orders of discovery.
const (
	SortStart     = "start_time" // soonest first (the default)
	SortDistance  = "distance"   // nearest first; needs a place
	SortRelevance = "relevance"  // best text match first; needs q
)

// Bounds of a text query.
const (
	MaxQuery = 200
	MaxTerms = 10
)

// SearchParams is a discovery request as the API receives it.
type SearchParams struct {
	Text      string
	Sport     string
	From      *time.Time // default: now
	To        *time.Time
	Latitude  *float64
	Longitude *float64
	Near      string // a place label, placed by the geocoder
	RadiusKM  *float64
	FreeSpots *bool
	Skill     string
	SeriesID  string
	Sort      string
	Cursor    string
	Limit     int
}

// Point is a place on the map.
type Point struct{ Lat, Lon float64 }

// Query is a validated search, for the store.
type Query struct {
	ViewerID  string
	Terms     []string // words that must all appear in the title or description
	Sport     string
	From      time.Time
	To        *time.Time
	Center    *Point
	RadiusKM  float64
	FreeSpots *bool
	SkillRank int // -1: any
	SeriesID  string
	Sort      string
	After     *Cursor
}

// Cursor is where a page ends in its sort order: the sort key (start time
// in microseconds, distance in km, or relevance rank, lower first) and the
// id that breaks ties.
type Cursor struct {
	Key float64
	ID  string
}

// Found is an event a search or a recommendation found.
type Found struct {
	Event        *Event
	DistanceKM   *float64
	Key          float64 // the sort key, for the cursor
	Score        float64 // recommendations: how well it fits, 0..1
	MatchesGoing int     // recommendations: the viewer's matches going
}

// Page is one page of found events.
type Page struct {
	Items      []Found
	HasMore    bool
	NextCursor string
}

// Terms splits a text query into the words full-text search looks for.
func Terms(q string) ([]string, error) {
	if !utf8.ValidString(q) || utf8.RuneCountInString(q) > MaxQuery {
		return nil, apperr.InvalidParam("q", "invalid_query", "q must be at most %d characters of text", MaxQuery)
	}
	words := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	if len(words) == 0 {
		return nil, apperr.InvalidParam("q", "invalid_query", "q must contain a word")
	}
	var out []string
	for _, w := range words {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	if len(out) > MaxTerms {
		return nil, apperr.InvalidParam("q", "invalid_query", "q may hold at most %d words", MaxTerms)
	}
	return out, nil
}

// Search finds events the viewer may see: public ones, and invite-only
// ones they created or were invited to; never those of a creator they
// blocked or who blocked them; scheduled and starting in [from, to).
func (s *Service) Search(ctx context.Context, viewerID string, p SearchParams) (*Page, error) {
	now := s.clock.Now()
	q := &Query{ViewerID: viewerID, From: now, SkillRank: -1, Sort: p.Sort, SeriesID: p.SeriesID, FreeSpots: p.FreeSpots}
	if p.Text != "" {
		terms, err := Terms(p.Text)
		if err != nil {
			return nil, err
		}
		q.Terms = terms
	}
	if p.Sport != "" {
		sp, err := normalizeSport("sport", p.Sport)
		if err != nil {
			return nil, err
		}
		q.Sport = sp
	}
	if p.From != nil {
		q.From = p.From.UTC()
	}
	if p.To != nil {
		t := p.To.UTC()
		if !t.After(q.From) {
			return nil, apperr.InvalidParam("to", "invalid_date_range", "to must be after from (from defaults to now)")
		}
		q.To = &t
	}
	center, err := s.center(p.Latitude, p.Longitude, p.Near)
	if err != nil {
		return nil, err
	}
	q.Center = center
	q.RadiusKM = DefaultRadiusKM
	if p.RadiusKM != nil {
		if math.IsNaN(*p.RadiusKM) || *p.RadiusKM <= 0 || *p.RadiusKM > MaxRadiusKM {
			return nil, apperr.InvalidParam("radius_km", "out_of_range", "radius_km must be above 0 and at most %d", MaxRadiusKM)
		}
		if center == nil {
			return nil, apperr.InvalidParam("radius_km", "location_required", "radius_km needs a place: latitude and longitude, or near")
		}
		q.RadiusKM = *p.RadiusKM
	}
	if p.Skill != "" {
		if err := checkSkill("skill", p.Skill); err != nil {
			return nil, err
		}
		q.SkillRank = skillRank(p.Skill)
	}
	if p.SeriesID != "" && !ids.Valid(ids.SportsEvent, p.SeriesID) {
		return nil, apperr.InvalidParam("series_id", "validation_failed", "series_id must be an event id")
	}
	switch q.Sort {
	case "":
		q.Sort = SortStart
	case SortStart:
	case SortDistance:
		if center == nil {
			return nil, apperr.InvalidParam("sort", "invalid_sort", "sort=distance needs a place: latitude and longitude, or near")
		}
	case SortRelevance:
		if len(q.Terms) == 0 {
			return nil, apperr.InvalidParam("sort", "invalid_sort", "sort=relevance needs q")
		}
	default:
		return nil, apperr.InvalidParam("sort", "invalid_sort", "sort must be start_time, distance or relevance")
	}
	if p.Cursor != "" {
		c, err := decodeCursor(sortKind(q.Sort), p.Cursor)
		if err != nil {
			return nil, err
		}
		q.After = c
	}
	found, err := s.store.Search(ctx, q, p.Limit)
	if err != nil {
		return nil, err
	}
	return pageOf(found, p.Limit, func(f Found) string { return encodeCursor(sortKind(q.Sort), Cursor{Key: f.Key, ID: f.Event.ID}) }), nil
}

func pageOf(found []Found, limit int, cursor func(Found) string) *Page {
	pg := &Page{Items: found}
	if len(found) > limit {
		pg.Items, pg.HasMore = found[:limit], true
		pg.NextCursor = cursor(pg.Items[len(pg.Items)-1])
	}
	return pg
}

// center is the place a search is near: coordinates, or a label the
// geocoder knows.
func (s *Service) center(lat, lon *float64, near string) (*Point, error) {
	if lat != nil || lon != nil {
		if near != "" {
			return nil, apperr.InvalidParam("near", "validation_failed", "send either near or latitude and longitude, not both")
		}
		if err := checkCoordinates(lat, lon); err != nil {
			return nil, err
		}
		return &Point{*lat, *lon}, nil
	}
	if near == "" {
		return nil, nil
	}
	if s.geo == nil {
		return nil, apperr.InvalidParam("near", "coordinates_required", "this server cannot place labels; send latitude and longitude")
	}
	la, lo, ok := s.geo.Geocode(near)
	if !ok {
		return nil, apperr.InvalidParam("near", "unknown_place", "%q is not a place the service knows; send latitude and longitude", near)
	}
	return &Point{la, lo}, nil
}

// Recommendation bounds.
const (
	RecommendHorizon    = 60 * 24 * time.Hour // how far ahead recommendations look
	RecommendCandidates = 500                 // events ranked per request
)

// CandidateQuery asks for events a recommendation may pick from: upcoming,
// scheduled, visible to the viewer, near, of the viewer's sports, not the
// viewer's own nor already answered.
type CandidateQuery struct {
	ViewerID string
	Center   Point
	RadiusKM float64
	From     time.Time
	To       time.Time
	Sports   []string // empty: any sport
	Limit    int
}

// Recommend ranks upcoming events near the viewer for their sports and
// skill: by skill fit, distance, how soon, free places and how many of the
// viewer's accepted matches are going. The cursor is the last item's place
// in that ranking.
func (s *Service) Recommend(ctx context.Context, viewerID, cursor string, limit int) (*Page, error) {
	v, err := s.store.Viewer(ctx, viewerID)
	if err != nil {
		return nil, err
	}
	if v.Latitude == nil || v.Longitude == nil {
		return nil, apperr.InvalidParam("latitude", "location_required",
			"set latitude and longitude in your profile (PATCH /v1/users/me) to get recommendations near you")
	}
	var after *recCursor
	if cursor != "" {
		if after, err = decodeRecCursor(cursor); err != nil {
			return nil, err
		}
	}
	now := s.clock.Now()
	radius := min(max(v.RadiusKM, 1), MaxRadiusKM)
	cq := &CandidateQuery{ViewerID: viewerID, Center: Point{*v.Latitude, *v.Longitude}, RadiusKM: radius,
		From: now, To: now.Add(RecommendHorizon), Limit: RecommendCandidates}
	for sp := range v.Sports {
		cq.Sports = append(cq.Sports, sp)
	}
	slices.Sort(cq.Sports)
	found, err := s.store.Candidates(ctx, cq)
	if err != nil {
		return nil, err
	}
	going := map[string]int{}
	if s.matches != nil && len(found) > 0 {
		evIDs := make([]string, len(found))
		for i, f := range found {
			evIDs[i] = f.Event.ID
		}
		if going, err = s.matches.MatchesGoing(ctx, viewerID, evIDs); err != nil {
			return nil, err
		}
	}
	for i := range found {
		f := &found[i]
		f.MatchesGoing = going[f.Event.ID]
		f.Score = score(f, v, radius, now)
	}
	slices.SortFunc(found, func(a, b Found) int { return recCompare(a, b) })
	if after != nil {
		mark := Found{Score: after.Score, Event: &Event{Start: time.UnixMicro(after.Start).UTC(), ID: after.ID}}
		i, _ := slices.BinarySearchFunc(found, mark, recCompare)
		for i < len(found) && recCompare(found[i], mark) <= 0 {
			i++
		}
		found = found[i:]
	}
	if len(found) > limit+1 {
		found = found[:limit+1]
	}
	return pageOf(found, limit, encodeRecCursor), nil
}

// recCompare orders recommendations: best score first, then soonest, then id.
func recCompare(a, b Found) int {
	switch {
	case a.Score > b.Score:
		return -1
	case a.Score < b.Score:
		return 1
	case a.Event.Start.Before(b.Event.Start):
		return -1
	case a.Event.Start.After(b.Event.Start):
		return 1
	}
	return strings.Compare(a.Event.ID, b.Event.ID)
}

// score is how well an event fits the viewer, 0..1.
func score(f *Found, v *Viewer, radius float64, now time.Time) float64 {
	e := f.Event
	distance := 0.5
	if f.DistanceKM != nil {
		distance = max(0, 1-*f.DistanceKM/radius)
	}
	skill := 1.0 // an event open to every level fits everyone
	if e.SkillMin != "" || e.SkillMax != "" {
		skill = 0.6 // the viewer's level is unknown
		if lvl := v.Sports[e.Sport]; lvl != "" {
			r, lo, hi := skillRank(lvl), skillRank(e.SkillMin), skillRank(e.SkillMax)
			if e.SkillMax == "" {
				hi = 3
			}
			if e.SkillMin == "" {
				lo = 0
			}
			gap := max(lo-r, r-hi, 0)
			skill = max(0, 1-0.5*float64(gap))
		}
	}
	soon := max(0, 1-e.Start.Sub(now).Hours()/RecommendHorizon.Hours())
	spots := 0.0
	if e.SpotsLeft() > 0 {
		spots = 1
	}
	friends := float64(min(f.MatchesGoing, 5)) / 5
	s := 0.30*skill + 0.30*distance + 0.15*soon + 0.10*spots + 0.15*friends
	return math.Round(s*1e6) / 1e6
}

// MineQuery asks for a page of the events of one user.
type MineQuery struct {
	UserID   string
	Upcoming bool   // not yet ended, soonest first; else ended, latest first
	Role     string // "creator", "attendee" or "" for both
	Now      time.Time
	After    *Cursor // Key: start in microseconds
	Limit    int
}

// Mine is one of the user's events, with their part in it.
type Mine struct {
	Event  *Event
	Role   string // creator or attendee
	Status string // their answer, "" if none
}

// MyEvents lists the events the viewer created or answered going,
// waitlisted or maybe, upcoming (not ended) or past.
func (s *Service) MyEvents(ctx context.Context, viewerID string, upcoming bool, role, cursor string, limit int) ([]*Mine, string, error) {
	if role != "" && role != "creator" && role != "attendee" {
		return nil, "", apperr.InvalidParam("role", "validation_failed", "role must be creator or attendee")
	}
	kind := byte(kindPast)
	if upcoming {
		kind = kindUpcoming
	}
	q := &MineQuery{UserID: viewerID, Upcoming: upcoming, Role: role, Now: s.clock.Now(), Limit: limit}
	if cursor != "" {
		c, err := decodeCursor(kind, cursor)
		if err != nil {
			return nil, "", err
		}
		q.After = c
	}
	list, err := s.store.UserEvents(ctx, q)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(list) > limit {
		list = list[:limit]
		last := list[len(list)-1].Event
		next = encodeCursor(kind, Cursor{Key: float64(last.Start.UnixMicro()), ID: last.ID})
	}
	return list, next, nil
}
