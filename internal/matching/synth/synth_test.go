package synth_test

import (
	"context"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/matching"
	"github.com/matchpoint-api/matchpoint/internal/matching/synth"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// Generated people pass the profile rules real people must pass.
func TestPeopleAreValid(t *testing.T) {
	g := synth.New(synth.Options{Seed: 1, Tag: "t"})
	for range 2000 {
		p := g.Person()
		u := p.User
		if _, err := users.CheckUsername(u.Username); err != nil {
			t.Fatalf("%s: %v", u.Username, err)
		}
		if _, err := users.NormalizeSports(u.Sports); err != nil || len(u.Sports) == 0 {
			t.Fatalf("%v: %v", u.Sports, err)
		}
		if _, err := users.NormalizeSkillLevels(u.SkillLevels, u.Sports); err != nil {
			t.Fatal(err)
		}
		if err := users.CheckAvailability(u.Availability); err != nil {
			t.Fatalf("%v: %v", u.Availability, err)
		}
		if _, err := time.LoadLocation(u.Timezone); err != nil {
			t.Fatal(err)
		}
		if d := matching.DistanceKM(*u.Latitude, *u.Longitude, p.Place.Lat, p.Place.Lon); d > 10*synth.Spread(p.Place) {
			t.Fatalf("%s lives %.0f km from %s", u.Username, d, p.Place.Name)
		}
	}
}

// Seeded people are found by the search on both engines.
func TestSeedThenFind(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		g := synth.New(synth.Options{Seed: 2, Tag: "s", Places: nil})
		var someone *users.User
		sum, err := synth.Seed(ctx, db, g, 3000, 700, "", nil, func(p synth.Person) {
			if someone == nil && p.Place.Population > 5_000_000 && store.Recommendable(p.User) {
				someone = p.User
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.OptimizeMatchIndex(ctx); err != nil {
			t.Fatal(err)
		}
		var n, rows int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM users`).Scan(&n); err != nil || n != 3000 {
			t.Fatalf("%d users, %v", n, err)
		}
		if err := db.QueryRowContext(ctx, `SELECT COUNT(DISTINCT user_id) FROM match_index`).Scan(&rows); err != nil || rows != sum.Recommended {
			t.Fatalf("%d people indexed, %d recommendable: %v", rows, sum.Recommended, err)
		}
		if someone == nil {
			t.Skip("nobody in a big city in this sample")
		}
		svc := matching.NewService(store.NewMatching(db), clock.Real{}, matching.Settings{})
		if _, _, err := svc.Find(ctx, someone.ID, matching.Criteria{Limit: 20, MaxDistance: 1000}); err != nil {
			t.Fatal(err)
		}
	})
}
