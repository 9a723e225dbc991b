package store_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/events"
	idgen "github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// TestSeedEvents: seeded events are ordinary events, found by text and place.
func TestSeedEvents(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC()
		u := &users.User{ID: idgen.New(idgen.User), Email: "seed@example.com", Username: "seeder", Sports: []string{},
			SkillLevels: map[string]string{}, Availability: []users.Slot{}, Timezone: "UTC", Privacy: users.DefaultPrivacy,
			Role: auth.RoleMember, Tier: users.TierFree, CreatedAt: now, UpdatedAt: now}
		if err := store.NewUsers(db).CreateUser(ctx, u, nil); err != nil {
			t.Fatal(err)
		}
		places := []store.SeedPlace{{Label: "Lyon", Lat: 45.764, Lon: 4.8357, Timezone: "Europe/Paris"}}
		got, err := store.SeedEvents(ctx, db, 2030, rand.New(rand.NewPCG(3, 4)), []string{u.ID}, places, now)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM events`).Scan(&n); err != nil || n != 2030 || len(got) != 2030 {
			t.Fatalf("%d events stored, %d ids (%v)", n, len(got), err)
		}
		st := store.NewEvents(db)
		found, err := st.Search(ctx, &events.Query{ViewerID: "usr_someone", Terms: []string{"doubles"}, From: now, SkillRank: -1,
			Sort: events.SortStart, Center: &events.Point{Lat: 45.764, Lon: 4.8357}, RadiusKM: 20}, 20)
		if err != nil || len(found) != 21 {
			t.Fatalf("found %d (%v)", len(found), err)
		}
		for i, f := range found {
			if i > 0 && f.Event.Start.Before(found[i-1].Event.Start) {
				t.Fatal("not in start order")
			}
			if *f.DistanceKM > 20 {
				t.Fatalf("%.1f km away", *f.DistanceKM)
			}
		}
	})
}
