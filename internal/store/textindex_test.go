package store_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/auth"
	idgen "github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// TestMergeTextIndexes: events written one by one leave the full-text
// index in several segments; merged, it is one segment that finds the same
// events and passes FTS5's integrity check.
func TestMergeTextIndexes(t *testing.T) {
	db := testdb.Open(t, testdb.NewURL(t, store.SQLite))
	ctx := context.Background()
	now := time.Now().UTC()
	u := &users.User{ID: idgen.New(idgen.User), Email: "m@example.com", EmailKey: "m@example.com", Username: "merger", UsernameKey: "merger",
		Sports: []string{}, SkillLevels: map[string]string{}, Availability: []users.Slot{}, Timezone: "UTC", Privacy: users.DefaultPrivacy,
		Role: auth.RoleMember, Tier: users.TierFree, CreatedAt: now, UpdatedAt: now}
	if err := store.NewUsers(db).CreateUser(ctx, u, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := store.SeedEvents(ctx, db, 500, rand.New(rand.NewPCG(1, 2)), []string{u.ID}, []store.SeedPlace{{Label: "Lyon", Lat: 45.764, Lon: 4.8357}}, now); err != nil {
		t.Fatal(err)
	}
	count := func(q string) int {
		var n int
		if err := db.DB.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	segments := func() int { return count(`SELECT COUNT(DISTINCT segid) FROM events_fts_idx`) }
	if n := segments(); n != 1 {
		t.Fatalf("seeded index in %d segments", n)
	}
	// Each statement its own transaction, each a segment of its own.
	for seq := 1; seq <= 7; seq++ {
		if _, err := db.DB.ExecContext(ctx, `UPDATE events SET title = title || ' lantern' WHERE seq = $1`, seq); err != nil {
			t.Fatal(err)
		}
	}
	before := segments()
	if before < 3 {
		t.Fatalf("only %d segments after seven writes", before)
	}
	words := []string{"lantern", "welcome", "tennis", "g2x739y543"}
	found := map[string]int{}
	for _, w := range words {
		found[w] = count(`SELECT COUNT(*) FROM events_fts WHERE events_fts MATCH '"` + w + `"'`)
	}
	if found["lantern"] != 7 || found["welcome"] == 0 {
		t.Fatalf("before merging: %v", found)
	}
	if err := db.MergeTextIndexes(ctx, before); err != nil {
		t.Fatal(err)
	}
	if n := segments(); n != before {
		t.Fatalf("merged %d segments into %d, at most %d allowed", before, n, before)
	}
	if err := db.MergeTextIndexes(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if n := segments(); n != 1 {
		t.Fatalf("%d segments after merging %d", n, before)
	}
	for _, w := range words {
		if n := count(`SELECT COUNT(*) FROM events_fts WHERE events_fts MATCH '"` + w + `"'`); n != found[w] {
			t.Errorf("%q: %d events after merging, %d before", w, n, found[w])
		}
	}
	if _, err := db.DB.ExecContext(ctx, `INSERT INTO events_fts (events_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Fatal(err)
	}
}
