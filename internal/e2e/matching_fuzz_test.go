package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/store"
)

// FuzzMatchingBodies sends arbitrary bodies to the matching operations:
// whatever the bytes, a success or a 4xx problem, never a 5xx.
func FuzzMatchingBodies(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"sports":["tennis"],"skill_level":"expert","max_distance":1000,"limit":100}`, `{"max_distance":1e-300}`,
		`{"cursor":"MTAwOjA6dXNyXw"}`, `{"cursor":"` + strings.Repeat("A", 200) + `"}`, `{"sports":["tennis","TENNIS","ping pong"]}`,
		`{"user_id":"usr_00000000000000000000000000","message":"\u0000"}`, `{"user_id":"` + strings.Repeat("x", 64) + `"}`,
		`{"limit":0}`, `{"max_distance":"far"}`, `null`, `[]`, "\xff",
	} {
		f.Add(0, seed)
		f.Add(1, seed)
	}
	s := apptest.Start(f, store.SQLite)
	me := s.Player(f, "fuzzplayer", tennis("intermediate", parisLat, parisLon))
	s.Player(f, "partner", tennis("advanced", parisLat+0.01, parisLon))
	k := keyOf(f, s.App, me.ID, "matching")
	f.Fuzz(func(t *testing.T, target int, body string) {
		path := "/v1/matches/find"
		if uint(target)%2 == 1 {
			path = "/v1/matches"
		}
		req, _ := http.NewRequest("POST", s.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+k)
		req.Header.Set("Content-Type", "application/json")
		r := do(t, req)
		if r.Status >= 500 || (r.Status >= 400 && r.Header.Get("Content-Type") != "application/problem+json") {
			t.Fatalf("POST %s with %q: %d %s", path, body, r.Status, r.Body)
		}
	})
}
