package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// Typed views of the matching API's answers.
type recommendation struct {
	Object string `json:"object"`
	User   struct {
		ID        string  `json:"id"`
		Location  string  `json:"location"`
		Latitude  *string `json:"latitude"`
		Longitude *string `json:"longitude"`
	} `json:"user"`
	CompatibilityScore int      `json:"compatibility_score"`
	CommonSports       []string `json:"common_sports"`
	DistanceKM         *int     `json:"distance_km"`
	Reasons            []struct {
		Factor  string `json:"factor"`
		ForYou  int    `json:"for_you"`
		ForThem int    `json:"for_them"`
		Detail  string `json:"detail"`
	} `json:"reasons"`
}

type recommendations struct {
	Object     string           `json:"object"`
	Data       []recommendation `json:"data"`
	HasMore    bool             `json:"has_more"`
	NextCursor string           `json:"next_cursor"`
}

type matchDoc struct {
	Object             string   `json:"object"`
	ID                 string   `json:"id"`
	User1ID            string   `json:"user1_id"`
	User2ID            string   `json:"user2_id"`
	CompatibilityScore int      `json:"compatibility_score"`
	CommonSports       []string `json:"common_sports"`
	Sport              *string  `json:"sport"`
	Message            string   `json:"message"`
	Status             string   `json:"status"`
	CreatedAt          string   `json:"created_at"`
	ExpiresAt          string   `json:"expires_at"`
	AcceptedAt         *string  `json:"accepted_at"`
	DeclinedAt         *string  `json:"declined_at"`
	ExpiredAt          *string  `json:"expired_at"`
	CancelledAt        *string  `json:"cancelled_at"`
}

type matchList struct {
	Data       []matchDoc `json:"data"`
	HasMore    bool       `json:"has_more"`
	NextCursor string     `json:"next_cursor"`
}

type matchStats struct {
	Sent, Received         struct{ Total, Pending, Accepted, Declined, Expired, Cancelled int }
	AcceptanceRateSent     *float64 `json:"acceptance_rate_sent"`
	AcceptanceRateReceived *float64 `json:"acceptance_rate_received"`
	AverageScoreAccepted   *float64 `json:"average_score_accepted"`
	TopSports              []struct {
		Sport string
		Count int
	} `json:"top_sports"`
}

func find(t *testing.T, s *apptest.Server, token, body string) recommendations {
	t.Helper()
	return decode[recommendations](t, api(t, s, "POST", "/v1/matches/find", token, body), 200)
}

func foundIDs(rs recommendations) []string {
	var out []string
	for _, r := range rs.Data {
		out = append(out, r.User.ID)
	}
	return out
}

// Paris and places around it.
const parisLat, parisLon = 48.8566, 2.3522

func tennis(level string, lat, lon float64) apptest.Player {
	p := apptest.Player{Sports: []string{"tennis"}, Levels: map[string]string{"tennis": level}, Lat: lat, Lon: lon,
		Timezone: "Europe/Paris", Availability: []users.Slot{{Day: "saturday", Start: "09:00", End: "12:00"}}}
	if level == "" {
		p.Levels = nil
	}
	return p
}

func TestMatchFindHardFilters(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		ctx := context.Background()
		me := s.Player(t, "seeker", tennis("intermediate", parisLat, parisLon))
		tok := keyOf(t, s.App, me.ID, "matching", "read", "write")

		good := s.Player(t, "good", tennis("advanced", parisLat+0.02, parisLon)) // ~2 km
		nolevel := s.Player(t, "nolevel", tennis("", parisLat-0.02, parisLon))   // states no level: kept
		blocked := s.Player(t, "blocked", tennis("intermediate", parisLat, parisLon+0.01))
		blocker := s.Player(t, "blocker", tennis("intermediate", parisLat, parisLon-0.01))
		hidden := tennis("intermediate", parisLat+0.01, parisLon+0.01)
		f := false
		hidden.Privacy = &users.PrivacyPatch{Discoverable: &f}
		hiddenU := s.Player(t, "hidden", hidden)
		priv := tennis("intermediate", parisLat+0.01, parisLon-0.01)
		pv := users.VisibilityPrivate
		priv.Privacy = &users.PrivacyPatch{ProfileVisibility: &pv}
		privU := s.Player(t, "private", priv)
		farP := tennis("intermediate", 48.1, parisLon) // ~84 km: beyond my 25 km, within its own 100
		farP.RadiusKM = 100
		far := s.Player(t, "far", farP)
		shortRadius := tennis("intermediate", parisLat+0.15, parisLon) // ~17 km, but travels 10
		shortRadius.RadiusKM = 10
		shortU := s.Player(t, "homebody", shortRadius)
		expert := s.Player(t, "expert", tennis("expert", parisLat+0.03, parisLon)) // two steps above intermediate
		golfer := apptest.Player{Sports: []string{"golf"}, Lat: parisLat, Lon: parisLon + 0.02}
		golferU := s.Player(t, "golfer", golfer)
		pendingU := s.Player(t, "pending", tennis("intermediate", parisLat+0.04, parisLon))
		acceptedU := s.Player(t, "accepted", tennis("intermediate", parisLat+0.05, parisLon))
		declinedU := s.Player(t, "declined", tennis("intermediate", parisLat+0.06, parisLon))
		nowhere := s.Player(t, "nowhere", apptest.Player{Sports: []string{"tennis"}})

		if _, err := s.App.Matching.Block(ctx, me.ID, blocked.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.App.Matching.Block(ctx, blocker.ID, me.ID); err != nil {
			t.Fatal(err)
		}
		s.Match(t, me, pendingU, false)
		s.Match(t, acceptedU, me, true)
		d := s.Match(t, declinedU, me, false)
		if _, err := s.App.Matching.Decline(ctx, me.ID, d.ID); err != nil {
			t.Fatal(err)
		}

		got := foundIDs(find(t, s, tok, `{"sports":["tennis"]}`))
		want := []string{good.ID, nolevel.ID}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			names := map[string]string{}
			for _, u := range []*users.User{good, nolevel, blocked, blocker, hiddenU, privU, far, shortU, expert, golferU, pendingU, acceptedU, declinedU, nowhere} {
				names[u.ID] = u.Username
			}
			var gotNames []string
			for _, id := range got {
				gotNames = append(gotNames, names[id])
			}
			t.Fatalf("found %v, want good and nolevel", gotNames)
		}

		// A wider search reaches the far player; expert is found when asking for advanced players.
		if ids := foundIDs(find(t, s, tok, `{"sports":["tennis"],"max_distance":100}`)); !slices.Contains(ids, far.ID) || slices.Contains(ids, shortU.ID) {
			t.Fatalf("max_distance 100: %v", ids)
		}
		if ids := foundIDs(find(t, s, tok, `{"sports":["tennis"],"skill_level":"advanced"}`)); !slices.Contains(ids, expert.ID) {
			t.Fatalf("skill_level advanced: %v", ids)
		}
		if ids := foundIDs(find(t, s, tok, `{"sports":["golf"],"max_distance":10}`)); !slices.Equal(ids, []string{golferU.ID}) {
			t.Fatalf("golf: %v", ids)
		}

		// Thirty days after the decline, the pair may meet again.
		s.Clock.Advance(31 * 24 * time.Hour)
		if ids := foundIDs(find(t, s, tok, `{"sports":["tennis"]}`)); !slices.Contains(ids, declinedU.ID) {
			t.Fatalf("after 31 days: %v", ids)
		}

		// Bad criteria.
		wantProblem(t, s, api(t, s, "POST", "/v1/matches/find", tok, `{"sports":["quidditch"]}`), 422, "unknown_sport", "sports[0]")
		wantProblem(t, s, api(t, s, "POST", "/v1/matches/find", tok, `{"max_distance":-1}`), 422, "validation_failed", "max_distance")
		wantProblem(t, s, api(t, s, "POST", "/v1/matches/find", tok, `{"max_distance":5000}`), 422, "validation_failed", "max_distance")
		wantProblem(t, s, api(t, s, "POST", "/v1/matches/find", tok, `{"skill_level":"godlike"}`), 422, "validation_failed", "skill_level")
		wantProblem(t, s, api(t, s, "POST", "/v1/matches/find", tok, `{"cursor":"nope"}`), 422, "invalid_cursor", "cursor")
		wantProblem(t, s, api(t, s, "POST", "/v1/matches/find", keyOf(t, s.App, me.ID, "read"), `{}`), 403, "insufficient_scope", "")
		p := wantProblem(t, s, api(t, s, "POST", "/v1/matches/find", keyOf(t, s.App, nowhere.ID, "matching"), `{}`), 422, "location_required", "location")
		if !strings.Contains(fmt.Sprint(p["detail"]), "PATCH /v1/users/me") {
			t.Errorf("location_required does not say how: %v", p["detail"])
		}
	})
}

func TestMatchFindResultShape(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		me := s.Player(t, "ann", tennis("intermediate", parisLat, parisLon))
		var others []*users.User
		for i := range 5 {
			p := tennis("intermediate", parisLat+0.01*float64(i+1), parisLon)
			if i == 2 {
				p.Availability = nil // less in common: lower score
			}
			others = append(others, s.Player(t, fmt.Sprintf("player%d", i), p))
		}
		tok := keyOf(t, s.App, me.ID, "matching")
		page := find(t, s, tok, `{"limit":2}`)
		if page.Object != "list" || len(page.Data) != 2 || !page.HasMore || page.NextCursor == "" {
			t.Fatalf("page 1: %+v", page)
		}
		all := page.Data
		for page.HasMore {
			page = find(t, s, tok, `{"limit":2,"cursor":"`+page.NextCursor+`"}`)
			all = append(all, page.Data...)
		}
		if len(all) != 5 {
			t.Fatalf("paged through %d, want 5", len(all))
		}
		for i, r := range all {
			if r.Object != "recommendation" || r.User.Latitude != nil || r.User.Longitude != nil || r.DistanceKM == nil ||
				!slices.Equal(r.CommonSports, []string{"tennis"}) || len(r.Reasons) != 5 || r.CompatibilityScore < 0 || r.CompatibilityScore > 100 {
				t.Fatalf("item %d: %+v", i, r)
			}
			if i > 0 {
				prev := all[i-1]
				if prev.CompatibilityScore < r.CompatibilityScore || (prev.CompatibilityScore == r.CompatibilityScore && *prev.DistanceKM > *r.DistanceKM) {
					t.Fatalf("not ordered at %d: %d/%d then %d/%d", i, prev.CompatibilityScore, *prev.DistanceKM, r.CompatibilityScore, *r.DistanceKM)
				}
			}
		}
		if all[len(all)-1].User.ID != others[2].ID {
			t.Errorf("the player without availability is not last")
		}
		if !strings.Contains(string(api(t, s, "GET", "/openapi.json", "", "").Body), "harmonic mean") {
			t.Error("the score formula is not in the API reference")
		}
	})
}

func TestMatchScoreSymmetric(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		a := s.Player(t, "alpha", apptest.Player{Sports: []string{"tennis", "padel"}, Levels: map[string]string{"tennis": "beginner", "padel": "advanced"},
			Lat: parisLat, Lon: parisLon, RadiusKM: 30, Timezone: "Europe/Paris", Availability: []users.Slot{{Day: "monday", Start: "18:00", End: "22:00"}}})
		b := s.Player(t, "bravo", apptest.Player{Sports: []string{"tennis"}, Levels: map[string]string{"tennis": "intermediate"},
			Lat: parisLat + 0.05, Lon: parisLon + 0.05, RadiusKM: 15, Timezone: "Europe/London", Availability: []users.Slot{{Day: "monday", Start: "16:00", End: "18:00"}}})
		ab := find(t, s, keyOf(t, s.App, a.ID, "matching"), `{"sports":["tennis"]}`)
		ba := find(t, s, keyOf(t, s.App, b.ID, "matching"), `{"sports":["tennis"]}`)
		if len(ab.Data) != 1 || len(ba.Data) != 1 {
			t.Fatalf("a finds %d, b finds %d", len(ab.Data), len(ba.Data))
		}
		x, y := ab.Data[0], ba.Data[0]
		if x.CompatibilityScore != y.CompatibilityScore || *x.DistanceKM != *y.DistanceKM {
			t.Fatalf("a sees %d at %d km, b sees %d at %d km", x.CompatibilityScore, *x.DistanceKM, y.CompatibilityScore, *y.DistanceKM)
		}
		// Each side's factors are the other's, swapped.
		for i := range x.Reasons {
			if x.Reasons[i].ForYou != y.Reasons[i].ForThem || x.Reasons[i].ForThem != y.Reasons[i].ForYou {
				t.Fatalf("reason %s: %+v vs %+v", x.Reasons[i].Factor, x.Reasons[i], y.Reasons[i])
			}
		}
		// b plays only tennis, which a plays; a plays two sports, b one of them.
		if x.Reasons[0].ForYou != 50 || x.Reasons[0].ForThem != 100 {
			t.Fatalf("sports reason from a: %+v", x.Reasons[0])
		}
		// The request records the same score.
		m := decode[matchDoc](t, api(t, s, "POST", "/v1/matches", keyOf(t, s.App, b.ID, "matching"), `{"user_id":"`+a.ID+`"}`), 201)
		if m.CompatibilityScore != x.CompatibilityScore {
			t.Fatalf("match score %d, search score %d", m.CompatibilityScore, x.CompatibilityScore)
		}
	})
}

// events reads the match.* events of the outbox, oldest first.
func matchEvents(t *testing.T, s *apptest.Server) []struct{ Type, Audience, Payload string } {
	t.Helper()
	rows, err := s.App.DB.QueryContext(context.Background(), `SELECT type, audience, payload FROM outbox_events WHERE type LIKE 'match.%' ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []struct{ Type, Audience, Payload string }
	for rows.Next() {
		var e struct{ Type, Audience, Payload string }
		if err := rows.Scan(&e.Type, &e.Audience, &e.Payload); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func notificationKinds(t *testing.T, s *apptest.Server, userID string) []string {
	t.Helper()
	rows, err := s.App.DB.QueryContext(context.Background(), `SELECT kind FROM notifications WHERE user_id = $1 ORDER BY id`, userID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	return out
}

func TestMatchLifecycle(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		a := s.Player(t, "asker", tennis("intermediate", parisLat, parisLon))
		b := s.Player(t, "invited", tennis("intermediate", parisLat+0.01, parisLon))
		c := s.Player(t, "third", tennis("intermediate", parisLat+0.02, parisLon))
		ka, kb, kc := keyOf(t, s.App, a.ID, "matching"), keyOf(t, s.App, b.ID, "matching"), keyOf(t, s.App, c.ID, "matching")

		r := api(t, s, "POST", "/v1/matches", ka, `{"user_id":"`+b.ID+`","sport":"Tennis","message":"Saturday?"}`)
		m := decode[matchDoc](t, r, 201)
		if m.Status != "pending" || m.User1ID != a.ID || m.User2ID != b.ID || m.Sport == nil || *m.Sport != "tennis" || m.Message != "Saturday?" ||
			r.Header.Get("Location") != "/v1/matches/"+m.ID || !slices.Equal(m.CommonSports, []string{"tennis"}) {
			t.Fatalf("created: %+v", m)
		}
		created, _ := time.Parse(time.RFC3339, m.CreatedAt)
		expires, _ := time.Parse(time.RFC3339, m.ExpiresAt)
		if expires.Sub(created) != 7*24*time.Hour {
			t.Fatalf("expires %s after creation", expires.Sub(created))
		}
		wantProblem(t, s, api(t, s, "POST", "/v1/matches", ka, `{"user_id":"`+b.ID+`"}`), 409, "match_exists", "user_id")
		wantProblem(t, s, api(t, s, "POST", "/v1/matches", kb, `{"user_id":"`+a.ID+`"}`), 409, "match_exists", "user_id")
		wantProblem(t, s, api(t, s, "POST", "/v1/matches", ka, `{"user_id":"`+a.ID+`"}`), 422, "cannot_match_self", "user_id")
		wantProblem(t, s, api(t, s, "POST", "/v1/matches", ka, `{"user_id":"usr_00000000000000000000000000"}`), 404, "not_found", "")
		wantProblem(t, s, api(t, s, "POST", "/v1/matches", ka, `{"user_id":"`+c.ID+`","sport":"golf"}`), 422, "sport_not_shared", "sport")

		// Only the two see it; only the invited answers.
		if got := decode[matchDoc](t, api(t, s, "GET", "/v1/matches/"+m.ID, kb, ""), 200); got.ID != m.ID {
			t.Fatal("invited cannot read the match")
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/matches/"+m.ID, kc, ""), 404, "not_found", "")
		wantProblem(t, s, api(t, s, "POST", "/v1/matches/"+m.ID+"/accept", kc, ""), 404, "not_found", "")
		wantProblem(t, s, api(t, s, "POST", "/v1/matches/"+m.ID+"/accept", ka, ""), 403, "not_invited", "")
		wantProblem(t, s, api(t, s, "POST", "/v1/matches/"+m.ID+"/cancel", kb, ""), 403, "not_requester", "")
		s.Clock.Advance(time.Hour)
		acc := decode[matchDoc](t, api(t, s, "POST", "/v1/matches/"+m.ID+"/accept", kb, ""), 200)
		if acc.Status != "accepted" || acc.AcceptedAt == nil {
			t.Fatalf("accepted: %+v", acc)
		}
		wantProblem(t, s, api(t, s, "POST", "/v1/matches/"+m.ID+"/decline", kb, ""), 409, "match_not_pending", "")

		// Declined and cancelled requests.
		m2 := decode[matchDoc](t, api(t, s, "POST", "/v1/matches", kc, `{"user_id":"`+a.ID+`"}`), 201)
		if d := decode[matchDoc](t, api(t, s, "POST", "/v1/matches/"+m2.ID+"/decline", ka, ""), 200); d.Status != "declined" || d.DeclinedAt == nil {
			t.Fatalf("declined: %+v", d)
		}
		wantProblem(t, s, api(t, s, "POST", "/v1/matches", kc, `{"user_id":"`+a.ID+`"}`), 409, "recently_declined", "user_id")
		m3 := decode[matchDoc](t, api(t, s, "POST", "/v1/matches", kb, `{"user_id":"`+c.ID+`"}`), 201)
		if x := decode[matchDoc](t, api(t, s, "POST", "/v1/matches/"+m3.ID+"/cancel", kb, ""), 200); x.Status != "cancelled" || x.CancelledAt == nil {
			t.Fatalf("cancelled: %+v", x)
		}

		// Expiry: a request left pending expires after 7 days, once.
		m4 := decode[matchDoc](t, api(t, s, "POST", "/v1/matches", kc, `{"user_id":"`+b.ID+`"}`), 201)
		s.Clock.Advance(7*24*time.Hour - 2*time.Hour)
		if n, err := s.App.Matching.ExpireDue(context.Background()); err != nil || n != 0 {
			t.Fatalf("early expiry: %d %v", n, err)
		}
		s.Clock.Advance(3 * time.Hour)
		if n, err := s.App.Matching.ExpireDue(context.Background()); err != nil || n != 1 {
			t.Fatalf("expiry: %d %v", n, err)
		}
		if n, _ := s.App.Matching.ExpireDue(context.Background()); n != 0 {
			t.Fatalf("expired twice: %d", n)
		}
		if x := decode[matchDoc](t, api(t, s, "GET", "/v1/matches/"+m4.ID, kb, ""), 200); x.Status != "expired" || x.ExpiredAt == nil {
			t.Fatalf("expired: %+v", x)
		}

		// Events: both people may read each, and data.match has the document's fields.
		evs := matchEvents(t, s)
		var types []string
		for _, e := range evs {
			types = append(types, e.Type)
		}
		wantTypes := []string{"match.created", "match.accepted", "match.created", "match.declined", "match.created", "match.created", "match.expired"}
		if !slices.Equal(types, wantTypes) {
			t.Fatalf("events %v, want %v", types, wantTypes)
		}
		var env struct {
			Type string
			Data struct {
				Match map[string]any `json:"match"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(evs[1].Payload), &env); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"id", "user1_id", "user2_id", "compatibility_score", "common_sports", "created_at", "status", "accepted_at"} {
			if _, ok := env.Data.Match[f]; !ok {
				t.Errorf("data.match lacks %s: %v", f, env.Data.Match)
			}
		}
		if env.Data.Match["status"] != "accepted" || env.Data.Match["id"] != m.ID || env.Data.Match["message"] != nil {
			t.Errorf("data.match = %v", env.Data.Match)
		}
		if aud := strings.Fields(evs[0].Audience); !slices.Contains(aud, a.ID) || !slices.Contains(aud, b.ID) || len(aud) != 2 {
			t.Errorf("audience %v", aud)
		}
		if got := notificationKinds(t, s, a.ID); !slices.Equal(got, []string{"match.accepted", "match.requested"}) {
			t.Errorf("a's notifications %v", got)
		}
		if got := notificationKinds(t, s, c.ID); !slices.Equal(got, []string{"match.declined", "match.requested", "match.expired"}) {
			t.Errorf("c's notifications %v", got)
		}

		// History and stats.
		list := decode[matchList](t, api(t, s, "GET", "/v1/matches?role=received", kb, ""), 200)
		if len(list.Data) != 2 || list.Data[0].ID != m4.ID || list.Data[1].ID != m.ID {
			t.Fatalf("b received: %+v", list.Data)
		}
		list = decode[matchList](t, api(t, s, "GET", "/v1/matches?status=accepted&limit=1", ka, ""), 200)
		if len(list.Data) != 1 || list.Data[0].ID != m.ID || list.HasMore {
			t.Fatalf("a accepted: %+v", list)
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/matches?status=lost", ka, ""), 422, "validation_failed", "status")
		st := decode[matchStats](t, api(t, s, "GET", "/v1/matches/stats", kc, ""), 200)
		// c sent two (declined, expired) and received one (cancelled).
		if st.Sent.Total != 2 || st.Sent.Declined != 1 || st.Sent.Expired != 1 || st.Received.Cancelled != 1 ||
			st.AcceptanceRateSent == nil || *st.AcceptanceRateSent != 0 || st.AcceptanceRateReceived != nil {
			t.Fatalf("c's stats: %+v", st)
		}
		st = decode[matchStats](t, api(t, s, "GET", "/v1/matches/stats", ka, ""), 200)
		if st.Sent.Accepted != 1 || *st.AcceptanceRateSent != 1 || st.AverageScoreAccepted == nil ||
			int(*st.AverageScoreAccepted) != m.CompatibilityScore || len(st.TopSports) != 1 || st.TopSports[0].Sport != "tennis" {
			t.Fatalf("a's stats: %+v", st)
		}
	})
}
