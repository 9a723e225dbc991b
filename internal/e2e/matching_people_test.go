package e2e

import (
	"context"
	"math"
	"net/url"
	"slices"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

func TestBlocks(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		a := s.Player(t, "annie", tennis("intermediate", parisLat, parisLon))
		b := s.Player(t, "bobby", tennis("intermediate", parisLat+0.01, parisLon))
		ka := keyOf(t, s.App, a.ID, "read", "write", "matching")
		kb := keyOf(t, s.App, b.ID, "read", "write", "matching")
		m := decode[matchDoc](t, api(t, s, "POST", "/v1/matches", kb, `{"user_id":"`+a.ID+`"}`), 201)
		if got := foundIDs(find(t, s, ka, `{}`)); len(got) != 0 {
			t.Fatalf("a pending request still shows: %v", got)
		}

		r := api(t, s, "PUT", "/v1/users/me/blocks/"+b.ID, ka, "")
		if r.Status != 200 {
			t.Fatalf("block: %d %s", r.Status, r.Body)
		}
		first := r.JSON(t)
		if first["object"] != "block" || first["user_id"] != b.ID {
			t.Fatalf("block = %v", first)
		}
		if again := api(t, s, "PUT", "/v1/users/me/blocks/"+b.ID, ka, "").JSON(t); again["created_at"] != first["created_at"] {
			t.Fatalf("blocking again changed the block: %v", again)
		}
		// Hidden from each other everywhere, whoever blocked.
		wantProblem(t, s, api(t, s, "GET", "/v1/users/"+b.ID, ka, ""), 404, "not_found", "")
		wantProblem(t, s, api(t, s, "GET", "/v1/users/"+a.ID, kb, ""), 404, "not_found", "")
		wantProblem(t, s, api(t, s, "GET", "/v1/matches/"+m.ID, kb, ""), 404, "not_found", "")
		if l := decode[matchList](t, api(t, s, "GET", "/v1/matches", kb, ""), 200); len(l.Data) != 0 {
			t.Fatalf("b's history shows the blocked pair: %+v", l.Data)
		}
		if got := foundIDs(find(t, s, kb, `{}`)); len(got) != 0 {
			t.Fatalf("b finds %v", got)
		}
		wantProblem(t, s, api(t, s, "POST", "/v1/matches", kb, `{"user_id":"`+a.ID+`"}`), 404, "not_found", "")
		wantProblem(t, s, api(t, s, "PUT", "/v1/users/me/blocks/"+a.ID, ka, ""), 422, "cannot_block_self", "user_id")
		wantProblem(t, s, api(t, s, "PUT", "/v1/users/me/blocks/usr_00000000000000000000000000", ka, ""), 404, "not_found", "")
		wantProblem(t, s, api(t, s, "PUT", "/v1/users/me/blocks/"+b.ID, keyOf(t, s.App, a.ID, "read"), ""), 403, "insufficient_scope", "")
		if l := decode[struct {
			Data []struct {
				Object string `json:"object"`
				UserID string `json:"user_id"`
			} `json:"data"`
		}](t, api(t, s, "GET", "/v1/users/me/blocks", ka, ""), 200); len(l.Data) != 1 || l.Data[0].UserID != b.ID {
			t.Fatalf("blocks: %+v", l)
		}

		// Unblocked: visible again; the pending request stays cancelled.
		if r := api(t, s, "DELETE", "/v1/users/me/blocks/"+b.ID, ka, ""); r.Status != 204 {
			t.Fatalf("unblock: %d %s", r.Status, r.Body)
		}
		wantProblem(t, s, api(t, s, "DELETE", "/v1/users/me/blocks/"+b.ID, ka, ""), 404, "not_found", "")
		if r := api(t, s, "GET", "/v1/users/"+b.ID, ka, ""); r.Status != 200 {
			t.Fatalf("profile after unblock: %d", r.Status)
		}
		if got := decode[matchDoc](t, api(t, s, "GET", "/v1/matches/"+m.ID, kb, ""), 200); got.Status != "cancelled" {
			t.Fatalf("request after a block: %s", got.Status)
		}
		if got := foundIDs(find(t, s, ka, `{}`)); !slices.Equal(got, []string{b.ID}) {
			t.Fatalf("after unblock a finds %v", got)
		}
	})
}

func TestMatchesOnlyVisibility(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		vis := users.VisibilityMatches
		shy := tennis("intermediate", parisLat, parisLon)
		shy.Privacy = &users.PrivacyPatch{ProfileVisibility: &vis}
		a := s.Player(t, "shy", shy)
		b := s.Player(t, "friend", tennis("intermediate", parisLat+0.01, parisLon))
		c := s.Player(t, "stranger", tennis("intermediate", parisLat+0.02, parisLon))
		kb, kc := keyOf(t, s.App, b.ID, "read", "matching"), keyOf(t, s.App, c.ID, "read", "matching")
		missing := api(t, s, "GET", "/v1/users/usr_00000000000000000000000000", kb, "")
		hidden := api(t, s, "GET", "/v1/users/"+a.ID, kb, "")
		wantProblem(t, s, hidden, 404, "not_found", "")
		if missing.JSON(t)["detail"] == nil || len(hidden.Body) == 0 {
			t.Fatal("no bodies")
		}
		if got := foundIDs(find(t, s, kc, `{}`)); slices.Contains(got, a.ID) {
			t.Fatal("a matches-only profile is recommended to strangers")
		}
		// a may ask; b sees a once the match is accepted, c still does not.
		s.Match(t, a, b, false)
		wantProblem(t, s, api(t, s, "GET", "/v1/users/"+a.ID, kb, ""), 404, "not_found", "")
		ms := decode[matchList](t, api(t, s, "GET", "/v1/matches", kb, ""), 200)
		if _, err := s.App.Matching.Accept(context.Background(), b.ID, ms.Data[0].ID); err != nil {
			t.Fatal(err)
		}
		if r := api(t, s, "GET", "/v1/users/"+a.ID, kb, ""); r.Status != 200 {
			t.Fatalf("matched friend: %d", r.Status)
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/users/"+a.ID, kc, ""), 404, "not_found", "")
		k := keyOf(t, s.App, a.ID, "profile")
		wantProblem(t, s, api(t, s, "PATCH", "/v1/users/me", k, `{"privacy":{"profile_visibility":"friends"}}`), 422, "validation_failed", "privacy.profile_visibility")
	})
}

func TestLocationFromGazetteer(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		u := s.User(t, "traveller")
		k := keyOf(t, s.App, u.ID, "profile", "read")
		type me struct {
			Location       string   `json:"location"`
			Latitude       *float64 `json:"latitude"`
			Longitude      *float64 `json:"longitude"`
			LocationSource string   `json:"location_source"`
		}
		patch := func(body string) me { return decode[me](t, api(t, s, "PATCH", "/v1/users/me", k, body), 200) }
		if p := decode[me](t, api(t, s, "GET", "/v1/users/me", k, ""), 200); p.LocationSource != "none" || p.Latitude != nil {
			t.Fatalf("new profile: %+v", p)
		}
		p := patch(`{"location":"paris tx"}`)
		if p.LocationSource != "gazetteer" || p.Latitude == nil || math.Abs(*p.Latitude-33.66) > 0.05 || math.Abs(*p.Longitude+95.55) > 0.05 {
			t.Fatalf("paris tx: %+v", p)
		}
		p = patch(`{"location":"München"}`)
		if p.LocationSource != "gazetteer" || math.Abs(*p.Latitude-48.14) > 0.05 {
			t.Fatalf("München: %+v", p)
		}
		// Coordinates from the app win, and stay when only the label changes.
		p = patch(`{"location":"Home court","latitude":45.76,"longitude":4.83}`)
		if p.LocationSource != "client" || *p.Latitude != 45.76 {
			t.Fatalf("client: %+v", p)
		}
		p = patch(`{"location":"Lyon"}`)
		if p.LocationSource != "client" || *p.Latitude != 45.76 {
			t.Fatalf("label after client coordinates: %+v", p)
		}
		// Cleared: no position; cleared with a label: the label's.
		p = patch(`{"latitude":null}`)
		if p.LocationSource != "none" || p.Latitude != nil {
			t.Fatalf("cleared: %+v", p)
		}
		p = patch(`{"location":"Lyon","latitude":null}`)
		if p.LocationSource != "gazetteer" || p.Latitude == nil || math.Abs(*p.Latitude-45.75) > 0.05 {
			t.Fatalf("cleared with a label: %+v", p)
		}
		p = patch(`{"location":"Nowhere-in-particular-xyz"}`)
		if p.LocationSource != "none" || p.Latitude != nil {
			t.Fatalf("unknown place: %+v", p)
		}
		// Others never see a position.
		other := s.User(t, "onlooker")
		r := api(t, s, "GET", "/v1/users/"+u.ID, keyOf(t, s.App, other.ID, "read"), "")
		if pub := r.JSON(t); pub["latitude"] != nil || pub["longitude"] != nil || pub["location_source"] != nil {
			t.Fatalf("public profile shows %v", pub)
		}
	})
}

func TestPlaces(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		k := keyOf(t, s.App, s.User(t, "typist").ID, "read")
		type place struct {
			Object, Label, Name, Admin1, Country, Timezone string
			Population                                     int
		}
		get := func(q string) []place {
			return decode[struct{ Data []place }](t, api(t, s, "GET", "/v1/places?q="+url.QueryEscape(q)+"&limit=3", k, ""), 200).Data
		}
		if p := get("springf, il"); len(p) == 0 || p[0].Label != "Springfield, Illinois, United States" || p[0].Object != "place" || p[0].Timezone != "America/Chicago" {
			t.Fatalf("springf, il: %+v", p)
		}
		if p := get("munc"); len(p) == 0 || p[0].Name != "München" {
			t.Fatalf("munc: %+v", p)
		}
		if p := get("par"); len(p) != 3 || p[0].Name != "Paris" || p[0].Country != "FR" {
			t.Fatalf("par: %+v", p)
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/places", k, ""), 422, "validation_failed", "q")
		wantProblem(t, s, api(t, s, "GET", "/v1/places?q=a&limit=50", k, ""), 422, "validation_failed", "limit")
		wantProblem(t, s, api(t, s, "GET", "/v1/places?q=%ff", k, ""), 400, "invalid_string", "q")
	})
}
