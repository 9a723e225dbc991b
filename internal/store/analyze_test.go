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

// TestAnalyze: on SQLite the statistics cover the ordinary tables but none
// of a full-text index's own tables, even those an earlier plain ANALYZE
// left, and keep no samples (STAT4).
func TestAnalyze(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC()
		u := &users.User{ID: idgen.New(idgen.User), Email: "an@example.com", Username: "analyst", Sports: []string{},
			SkillLevels: map[string]string{}, Availability: []users.Slot{}, Timezone: "UTC", Privacy: users.DefaultPrivacy,
			Role: auth.RoleMember, Tier: users.TierFree, CreatedAt: now, UpdatedAt: now}
		if err := store.NewUsers(db).CreateUser(ctx, u, nil); err != nil {
			t.Fatal(err)
		}
		places := []store.SeedPlace{{Label: "Lyon", Lat: 45.764, Lon: 4.8357}}
		if _, err := store.SeedEvents(ctx, db, 300, rand.New(rand.NewPCG(3, 4)), []string{u.ID}, places, now); err != nil {
			t.Fatal(err)
		}
		if db.Dialect == store.SQLite {
			if _, err := db.DB.ExecContext(ctx, `ANALYZE`); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Analyze(ctx); err != nil {
			t.Fatal(err)
		}
		if db.Dialect != store.SQLite {
			return
		}
		count := func(q string) int {
			var n int
			if err := db.DB.QueryRowContext(ctx, q).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := count(`SELECT COUNT(*) FROM sqlite_stat1 WHERE tbl = 'events'`); n == 0 {
			t.Error("no statistics for events")
		}
		if n := count(`SELECT COUNT(*) FROM sqlite_stat1 WHERE tbl IN (SELECT name FROM pragma_table_list WHERE type = 'shadow')`); n != 0 {
			t.Errorf("sqlite_stat1: %d rows for full-text index tables", n)
		}
		// No samples of index values at all: with them SQLite plans a
		// prepared statement again for each new value.
		if n := count(`SELECT COUNT(*) FROM sqlite_schema WHERE name = 'sqlite_stat4'`); n != 0 {
			t.Error("sqlite_stat4 is still there")
		}
	})
}

// TestAnalyzeLeavesNoSampleBehind: after Analyze, statements run with new
// values are not planned again each time. SQLite marks a statement
// prepared while samples (STAT4) are loaded to be planned again for each
// new value, and keeps the mark through every later preparation; the
// connection that ran ANALYZE kept the samples in memory after the table
// was dropped, so every statement later prepared on it was parsed on each
// use (8 % of the single writer's time in the send bench).
func TestAnalyzeLeavesNoSampleBehind(t *testing.T) {
	ctx := context.Background()
	db := testdb.Open(t, testdb.NewURL(t, store.SQLite))
	db.DB.SetMaxOpenConns(1) // Analyze's connection is the one used next
	now := time.Now().UTC()
	ids := seedPeople(t, db, "player", 20, now)
	convs := make([]store.SeedConversation, len(ids)-2)
	for i := range convs {
		convs[i] = store.SeedConversation{ID: idgen.New(idgen.Conversation), Members: ids[i : i+3]}
	}
	if err := store.SeedMessaging(ctx, db, convs, 0, nil, now); err != nil {
		t.Fatal(err)
	}
	if err := db.Analyze(ctx); err != nil {
		t.Fatal(err)
	}
	// A non-unique index: the planner consults samples for the value.
	const q = `SELECT conversation_id FROM conversation_members WHERE user_id = $1`
	for _, id := range ids {
		var conv string
		if err := db.QueryRowContext(ctx, q, id).Scan(&conv); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := db.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	replans := store.Replans(ctx, conn, q[:40])
	if len(replans) != 1 {
		t.Fatalf("%d statements of the query in the connection's cache, want 1", len(replans))
	}
	if replans[0] > 1 {
		t.Errorf("the statement was prepared again %d times in %d runs after Analyze", replans[0], len(ids))
	}
}
