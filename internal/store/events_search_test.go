package store_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/events"
	idgen "github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// TestSearchNearText: a text search near a place finds exactly what the
// same text search without a place finds within the radius, in the same
// order, page after page, whatever the sort; invite-only events and
// events of a blocked creator stay out of both. The two take different
// paths (the place's cells in the text index, or the text alone), so
// each checks the other.
func TestSearchNearText(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC()
		person := func(name string) string {
			u := &users.User{ID: idgen.New(idgen.User), Email: name + "@example.com", EmailKey: name + "@example.com", Username: name, UsernameKey: name, Sports: []string{},
				SkillLevels: map[string]string{}, Availability: []users.Slot{}, Timezone: "UTC", Privacy: users.DefaultPrivacy,
				Role: auth.RoleMember, Tier: users.TierFree, CreatedAt: now, UpdatedAt: now}
			if err := store.NewUsers(db).CreateUser(ctx, u, nil); err != nil {
				t.Fatal(err)
			}
			return u.ID
		}
		viewer, friend, blocked := person("viewer"), person("friend"), person("blocked")
		// Lyon and a town 30 km east (radii cut through it), and places on
		// either side of the antimeridian and near a pole.
		places := []store.SeedPlace{
			{Label: "Lyon", Lat: 45.764, Lon: 4.8357}, {Label: "East", Lat: 45.764, Lon: 5.22},
			{Label: "Taveuni", Lat: -16.85, Lon: 179.98}, {Label: "Longyearbyen", Lat: 78.22, Lon: 15.65},
		}
		if _, err := store.SeedEvents(ctx, db, 1500, rand.New(rand.NewPCG(7, 8)), []string{friend, blocked}, places, now); err != nil {
			t.Fatal(err)
		}
		var ids []string
		rows, err := db.DB.QueryContext(ctx, `SELECT id FROM events ORDER BY seq`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		// Every 7th event invite-only, the viewer invited to every other of
		// those; the viewer blocks one of the two creators.
		invited := map[string]bool{}
		for i := 0; i < len(ids); i += 7 {
			if _, err := db.DB.ExecContext(ctx, `UPDATE events SET visibility = 'invite_only' WHERE id = $1`, ids[i]); err != nil {
				t.Fatal(err)
			}
			if i%14 == 0 {
				invited[ids[i]] = true
				if _, err := db.DB.ExecContext(ctx, `INSERT INTO event_invitations (event_id, user_id, inviter_id, created_at) VALUES ($1, $2, $3, 0)`,
					ids[i], viewer, friend); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := db.DB.ExecContext(ctx, `INSERT INTO user_blocks (blocker_id, blocked_id, created_at) VALUES ($1, $2, 0)`, viewer, blocked); err != nil {
			t.Fatal(err)
		}
		if err := db.Analyze(ctx); err != nil {
			t.Fatal(err)
		}
		st := store.NewEvents(db)
		all := func(q events.Query) []events.Found {
			var out []events.Found
			for {
				page, err := st.Search(ctx, &q, 7)
				if err != nil {
					t.Fatal(err)
				}
				if len(page) <= 7 {
					return append(out, page...)
				}
				out = append(out, page[:7]...)
				q.After = &events.Cursor{Key: page[6].Key, ID: page[6].Event.ID}
			}
		}
		dist := func(e *events.Event, c events.Point) float64 {
			return 111.195 * math.Sqrt(math.Pow(*e.Latitude-c.Lat, 2)+math.Pow((*e.Longitude-c.Lon)*math.Cos((*e.Latitude+c.Lat)/2*math.Pi/180), 2))
		}
		centers := []events.Point{{Lat: 45.764, Lon: 4.8357}, {Lat: 45.70, Lon: 5.05}, {Lat: -16.85, Lon: -179.95}, {Lat: 78.3, Lon: 15.0}}
		checked := 0
		for _, terms := range [][]string{{"welcome"}, {"doubles"}, {"coffee", "afterwards"}, {"morning"}} {
			for _, sort := range []string{events.SortStart, events.SortDistance, events.SortRelevance} {
				textSort := sort
				if sort == events.SortDistance {
					textSort = events.SortStart
				}
				text := all(events.Query{ViewerID: viewer, Terms: terms, From: now, SkillRank: -1, Sort: textSort})
				for _, f := range text {
					if f.Event.CreatorID == blocked || (f.Event.Visibility != events.Public && !invited[f.Event.ID]) {
						t.Fatalf("%v: found %s, which the viewer may not see", terms, f.Event.ID)
					}
				}
				for _, c := range centers {
					for _, radius := range []float64{3, 25, 60} {
						var want []string
						var near []events.Found
						for _, f := range text {
							if dist(f.Event, c) <= radius {
								near = append(near, f)
							}
						}
						if sort == events.SortDistance {
							slices.SortStableFunc(near, func(a, b events.Found) int {
								if d := dist(a.Event, c) - dist(b.Event, c); d != 0 {
									return int(math.Copysign(1, d))
								}
								return strings.Compare(a.Event.ID, b.Event.ID)
							})
						}
						for _, f := range near {
							want = append(want, f.Event.ID)
						}
						var got []string
						for _, f := range all(events.Query{ViewerID: viewer, Terms: terms, From: now, SkillRank: -1, Sort: sort, Center: &c, RadiusKM: radius}) {
							got = append(got, f.Event.ID)
						}
						if !slices.Equal(got, want) {
							t.Errorf("%v near %v within %g km, by %s: found %d events, want %d\n got %v\nwant %v", terms, c, radius, sort, len(got), len(want), got, want)
						}
						checked += len(want)
					}
				}
			}
		}
		if checked < 1000 {
			t.Fatalf("only %d events compared: the seed does not exercise the search", checked)
		}
	})
}
