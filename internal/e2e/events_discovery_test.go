package e2e

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/geo"
	"github.com/matchpoint-api/matchpoint/internal/httpapi"
)

const lyonLat, lyonLon = 45.7640, 4.8357

func TestEventSearch(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		org, viewer := s.User(t, "org"), s.User(t, "viewer")
		ko, kv := eventsKey(t, s, org), eventsKey(t, s, viewer)
		now := s.Clock.Now()
		day := 24 * time.Hour
		a := newEvent(t, s, ko, map[string]any{"title": "Sunday doubles at the park", "sport": "tennis", "latitude": lyonLat, "longitude": lyonLon,
			"date": at(now.Add(2 * day)), "max_participants": 4, "skill_min": "intermediate", "skill_max": "advanced"})
		b := newEvent(t, s, ko, map[string]any{"title": "Beginner badminton evening", "sport": "badminton", "latitude": 45.75, "longitude": 4.85,
			"date": at(now.Add(3 * day)), "max_participants": 1})
		c := newEvent(t, s, ko, map[string]any{"title": "Tennis singles ladder", "description": "Competitive; doubles on request.",
			"sport": "tennis", "location": "Paris", "latitude": 48.8566, "longitude": 2.3522, "date": at(now.Add(4 * day))})
		d := newEvent(t, s, ko, map[string]any{"title": "Morning run", "sport": "running", "location": "Villeurbanne",
			"latitude": 45.77, "longitude": 4.88, "date": at(now.Add(10 * day))})
		gone := newEvent(t, s, ko, map[string]any{"title": "Cancelled doubles", "latitude": lyonLat, "longitude": lyonLon})
		decode[httpapi.SportsEvent](t, api(t, s, "POST", "/v1/events/"+gone.ID+"/cancel", ko, ""), 200)
		rsvp(t, s, eventsKey(t, s, s.User(t, "filler")), b.ID, "going") // b is full

		near := "latitude=45.764&longitude=4.8357"
		for _, c := range []struct {
			query string
			want  []string
		}{
			{"", []string{a.ID, b.ID, c.ID, d.ID}},
			{"q=doubles", []string{a.ID, c.ID}},
			{"q=doubles&sort=relevance", []string{a.ID, c.ID}}, // a title match outranks a description match
			{"q=DOUBLES+park", []string{a.ID}},
			{"q=double", []string{a.ID, c.ID}}, // stemmed
			{"q=doubles&sport=Tennis", []string{a.ID, c.ID}},
			{"sport=badminton", []string{b.ID}},
			{near + "&radius_km=10", []string{a.ID, b.ID, d.ID}},
			{near + "&radius_km=10&sort=distance", []string{a.ID, b.ID, d.ID}},
			{near + "&radius_km=500&sort=distance", []string{a.ID, b.ID, d.ID, c.ID}},
			{near + "&radius_km=10&q=doubles", []string{a.ID}},
			{"to=" + url.QueryEscape(at(now.Add(3*day+time.Hour))), []string{a.ID, b.ID}},
			{"from=" + url.QueryEscape(at(now.Add(3*day+time.Hour))), []string{c.ID, d.ID}},
			{"has_free_spots=true", []string{a.ID, c.ID, d.ID}},
			{"has_free_spots=false", []string{b.ID}},
			{"skill=beginner", []string{b.ID, c.ID, d.ID}},
			{"skill=advanced&sport=tennis", []string{a.ID, c.ID}},
			{"series_id=" + a.ID, nil},
		} {
			got := searchIDs(t, s, kv, c.query)
			if !slices.Equal(got, c.want) {
				t.Errorf("%s: got %v, want %v", c.query, got, c.want)
			}
			// One item per page gives the same answer in the same order.
			if paged := searchIDs(t, s, kv, c.query+"&limit=1"); !slices.Equal(paged, c.want) {
				t.Errorf("%s, one per page: got %v, want %v", c.query, paged, c.want)
			}
		}
		page := decode[httpapi.List[httpapi.SportsEvent]](t, api(t, s, "GET", "/v1/events?"+near+"&radius_km=10&sort=distance", kv, ""), 200)
		if page.Data[0].DistanceKM == nil || *page.Data[0].DistanceKM != 0 || *page.Data[2].DistanceKM < 3 || *page.Data[2].DistanceKM > 4 {
			t.Fatalf("distances: %v %v", page.Data[0].DistanceKM, page.Data[2].DistanceKM)
		}
		if page := decode[httpapi.List[httpapi.SportsEvent]](t, api(t, s, "GET", "/v1/events", kv, ""), 200); page.Data[0].DistanceKM != nil {
			t.Fatal("a distance without a place")
		}

		for _, c := range []struct {
			query, code, param string
		}{
			{"sort=distance", "invalid_sort", "sort"},
			{"sort=relevance", "invalid_sort", "sort"},
			{"sort=popularity", "validation_failed", "sort"},
			{"q=" + url.QueryEscape("!!! ..."), "invalid_query", "q"},
			{"q=one+two+three+four+five+six+seven+eight+nine+ten+eleven", "invalid_query", "q"},
			{"to=" + url.QueryEscape(at(now.Add(-time.Hour))), "invalid_date_range", "to"},
			{"from=yesterday", "validation_failed", "from"},
			{near + "&radius_km=0", "out_of_range", "radius_km"},
			{near + "&radius_km=501", "out_of_range", "radius_km"},
			{"radius_km=5", "location_required", "radius_km"},
			{"latitude=45", "incomplete_coordinates", "longitude"},
			{"latitude=95&longitude=4", "out_of_range", "latitude"},
			{"skill=pro", "validation_failed", "skill"},
			{"sport=quidditch", "unknown_sport", "sport"},
			{"has_free_spots=maybe", "validation_failed", "has_free_spots"},
			{"cursor=bogus", "invalid_cursor", "cursor"},
		} {
			wantProblem(t, s, api(t, s, "GET", "/v1/events?"+c.query, kv, ""), 422, c.code, c.param)
		}
		// A cursor belongs to its sort order.
		p1 := decode[httpapi.List[httpapi.SportsEvent]](t, api(t, s, "GET", "/v1/events?limit=1", kv, ""), 200)
		wantProblem(t, s, api(t, s, "GET", "/v1/events?"+near+"&sort=distance&cursor="+p1.NextCursor, kv, ""), 422, "invalid_cursor", "cursor")

		// Moving an event moves it in searches for words near a place.
		if got := searchIDs(t, s, kv, near+"&radius_km=10&q=run"); !slices.Equal(got, []string{d.ID}) {
			t.Fatalf("run near Lyon: %v", got)
		}
		decode[httpapi.SportsEvent](t, api(t, s, "PATCH", "/v1/events/"+d.ID, ko, `{"location":"Paris","latitude":48.86,"longitude":2.35}`), 200)
		if got := searchIDs(t, s, kv, near+"&radius_km=10&q=run"); len(got) != 0 {
			t.Fatalf("run near Lyon after the move: %v", got)
		}
		if got := searchIDs(t, s, kv, "latitude=48.8566&longitude=2.3522&radius_km=10&q=morning+run&sort=relevance"); !slices.Equal(got, []string{d.ID}) {
			t.Fatalf("run near Paris after the move: %v", got)
		}

		// A label is a place of the gazetteer (Lyon's centre, 0.3 km from b
		// and 1.9 km from a).
		if got := searchIDs(t, s, kv, "near=Lyon&radius_km=10&sort=distance"); !slices.Equal(got, []string{b.ID, a.ID}) {
			t.Fatalf("near=Lyon: %v", got)
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/events?near=Qzxqzv+Nowhere", kv, ""), 422, "unknown_place", "near")
		placed := newEvent(t, s, ko, map[string]any{"location": "Lyon"})
		lat, _, _ := geo.Default().Geocode("Lyon")
		if placed.Latitude == nil || *placed.Latitude != lat {
			t.Fatalf("an event in Lyon was not placed: %+v", placed)
		}
	})
}

func TestRecommendedEvents(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		org, me := s.User(t, "org"), s.User(t, "myself")
		ko, km := eventsKey(t, s, org), eventsKey(t, s, me)
		wantProblem(t, s, api(t, s, "GET", "/v1/events/recommended", km, ""), 422, "location_required", "latitude")
		decode[httpapi.Profile](t, api(t, s, "PATCH", "/v1/users/me", keyOf(t, s.App, me.ID, "write"), jsonBody(t, map[string]any{
			"latitude": lyonLat, "longitude": lyonLon, "travel_radius_km": 30,
			"sports": []string{"tennis", "running"}, "skill_levels": map[string]string{"tennis": "intermediate"}})), 200)

		now := s.Clock.Now()
		ev := func(body map[string]any) string {
			full := map[string]any{"latitude": lyonLat + 0.01, "longitude": lyonLon, "date": at(now.Add(3 * 24 * time.Hour))}
			for k, v := range body {
				full[k] = v
			}
			return newEvent(t, s, ko, full).ID
		}
		fits := ev(map[string]any{"title": "Fits", "skill_min": "intermediate", "skill_max": "advanced"})
		experts := ev(map[string]any{"title": "Experts", "skill_min": "expert"})
		run := ev(map[string]any{"title": "Run", "sport": "running", "latitude": 45.95, "longitude": 4.88, "date": at(now.Add(50 * 24 * time.Hour))})
		ev(map[string]any{"title": "Badminton", "sport": "badminton"})
		ev(map[string]any{"title": "Paris", "latitude": 48.8566, "longitude": 2.3522})
		ev(map[string]any{"title": "Secret", "visibility": "invite_only"})
		ev(map[string]any{"title": "Too late", "date": at(now.Add(90 * 24 * time.Hour))})
		answered := ev(map[string]any{"title": "Answered"})
		rsvp(t, s, km, answered, "maybe")
		newEvent(t, s, km, map[string]any{"title": "Mine", "latitude": lyonLat, "longitude": lyonLon})

		rec := func(q string) []httpapi.RecommendedEvent {
			return decode[httpapi.List[httpapi.RecommendedEvent]](t, api(t, s, "GET", "/v1/events/recommended?"+q, km, ""), 200).Data
		}
		got := rec("")
		var order []string
		for _, r := range got {
			order = append(order, r.Title)
			if r.Score <= 0 || r.Score > 1 || r.DistanceKM == nil || r.MatchesGoing != 0 {
				t.Errorf("%s: score %v distance %v", r.Title, r.Score, r.DistanceKM)
			}
		}
		if strings.Join(order, ",") != "Fits,Experts,Run" {
			t.Fatalf("recommended %v", order)
		}
		// Pages of one follow the same ranking.
		var paged []string
		cursor := ""
		for range 5 {
			page := decode[httpapi.List[httpapi.RecommendedEvent]](t, api(t, s, "GET", "/v1/events/recommended?limit=1&cursor="+cursor, km, ""), 200)
			for _, r := range page.Data {
				paged = append(paged, r.Title)
			}
			if !page.HasMore {
				break
			}
			cursor = page.NextCursor
		}
		if !slices.Equal(paged, order) {
			t.Fatalf("paged %v, want %v", paged, order)
		}
		// Matches going lift an event: five people I have an accepted match
		// with answer going to the run.
		for i := range 5 {
			friend := s.Player(t, "friend"+strconv.Itoa(i), apptest.Player{Sports: []string{"running"}, Lat: lyonLat, Lon: lyonLon})
			s.Match(t, me, friend, true)
			rsvp(t, s, eventsKey(t, s, friend), run, "going")
		}
		before := got[2].Score
		got = rec("")
		if got[0].ID != fits || got[1].ID != run || got[1].MatchesGoing != 5 || got[1].Score-before < 0.149 || got[2].ID != experts {
			t.Fatalf("with matches going: %v %v %v", got[0].Title, got[1].Title, got[2].Title)
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/events/recommended?cursor=nope", km, ""), 422, "invalid_cursor", "cursor")
	})
}
