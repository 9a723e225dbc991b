package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/matching"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// Profiles gathers each person's sports in one row: the order of the
// profile, levels only where stated, an empty list for someone with none,
// nothing for an unknown id.
func TestMatchingProfiles(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		svc := users.NewService(store.NewUsers(db), clk)
		ann, err := svc.Register(ctx, users.Registration{Email: "ann@example.com", Username: "ann", Password: "correct horse"})
		if err != nil {
			t.Fatal(err)
		}
		bob, err := svc.Register(ctx, users.Registration{Email: "bob@example.com", Username: "bob", Password: "correct horse"})
		if err != nil {
			t.Fatal(err)
		}
		sp := []string{"tennis", "padel", "archery"}
		lv := map[string]string{"padel": "expert", "archery": "beginner"}
		if _, err := svc.Update(ctx, ann.ID, users.Patch{Sports: &sp, SkillLevels: &lv,
			Availability: &[]users.Slot{{Day: "monday", Start: "18:00", End: "21:00"}}}); err != nil {
			t.Fatal(err)
		}
		got, err := store.NewMatching(db).Profiles(ctx, []string{ann.ID, bob.ID, "usr_nobody"})
		if err != nil {
			t.Fatal(err)
		}
		a, b := got[ann.ID], got[bob.ID]
		if len(got) != 2 || a == nil || b == nil {
			t.Fatalf("profiles: %v", got)
		}
		if !slices.Equal(a.Sports, sp) || len(a.SkillLevels) != 2 || a.SkillLevels["padel"] != "expert" || a.SkillLevels["archery"] != "beginner" ||
			len(a.Availability) != 1 || a.Username != "ann" {
			t.Fatalf("ann: %+v", a)
		}
		if b.Sports == nil || len(b.Sports) != 0 || b.SkillLevels == nil || len(b.SkillLevels) != 0 {
			t.Fatalf("bob: sports %#v levels %#v", b.Sports, b.SkillLevels)
		}
	})
}

// A search reads candidates in stages with a shrinking limit: whatever the
// limit, the rows are the first ones of the same order.
func TestMatchingCandidatesLimit(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		svc := users.NewService(store.NewUsers(db), clk)
		for i, s := range []string{"c", "a", "e", "b", "d", "f"} {
			u, err := svc.Register(ctx, users.Registration{Email: s + "@example.com", Username: "user" + s, Password: "correct horse"})
			if err != nil {
				t.Fatal(err)
			}
			sports := []string{"tennis"}
			if i%2 == 0 {
				sports = append(sports, "padel")
			}
			lat, lon := 48.85+float64(i)*0.06, 2.35
			if _, err := svc.Update(ctx, u.ID, users.Patch{Sports: &sports,
				Latitude: users.Nullable[float64]{Set: true, Value: lat}, Longitude: users.Nullable[float64]{Set: true, Value: lon}}); err != nil {
				t.Fatal(err)
			}
		}
		m := store.NewMatching(db)
		ranges := matching.Ranges(48.85, 2.35, 100, 0)
		key := func(rows []matching.Indexed) []string {
			var out []string
			for _, r := range rows {
				out = append(out, r.Sport+"/"+r.Profile.UserID)
			}
			return out
		}
		all, err := m.Candidates(ctx, []string{"tennis", "padel"}, ranges, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 9 {
			t.Fatalf("%d rows, want 9", len(all))
		}
		for limit := 1; limit <= len(all); limit++ {
			some, err := m.Candidates(ctx, []string{"padel", "tennis"}, ranges, limit)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(key(some), key(all)[:limit]) {
				t.Fatalf("limit %d: %v, want %v", limit, key(some), key(all)[:limit])
			}
		}
	})
}
