package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/matching"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// TestExpiryAcrossNodes: three service processes run the expiry worker over
// one PostgreSQL; every due request expires once, with one event.
func TestExpiryAcrossNodes(t *testing.T) {
	c := apptest.StartCluster(t, 3, "MATCHPOINT_MATCH_EXPIRY_EVERY=100ms")
	ctx := context.Background()
	mk := func(name string, lat float64) *users.User {
		u, err := c.App.Users.Register(ctx, users.Registration{Email: name + "@example.com", Username: name, Password: apptest.Password})
		if err != nil {
			t.Fatal(err)
		}
		sp, lv := []string{"tennis"}, map[string]string{"tennis": "advanced"}
		u, err = c.App.Users.Update(ctx, u.ID, users.Patch{Sports: &sp, SkillLevels: &lv,
			Latitude: users.Nullable[float64]{Set: true, Value: lat}, Longitude: users.Nullable[float64]{Set: true, Value: 2.35}})
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	hub := mk("hub", 48.85)
	const n = 40
	for i := range n {
		u := mk(fmt.Sprintf("asker%02d", i), 48.85+0.001*float64(i))
		if _, err := c.App.Matching.Create(ctx, u.ID, matching.Request{UserID: hub.ID}); err != nil {
			t.Fatal(err)
		}
	}
	// Make them all due at once.
	if _, err := c.App.DB.ExecContext(ctx, `UPDATE matches SET expires_at = $1`, time.Now().Add(-time.Second).UnixMicro()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var pending, events int
		if err := c.App.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM matches WHERE status = 'pending'`).Scan(&pending); err != nil {
			t.Fatal(err)
		}
		if err := c.App.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM outbox_events WHERE type = 'match.expired'`).Scan(&events); err != nil {
			t.Fatal(err)
		}
		if pending == 0 {
			time.Sleep(300 * time.Millisecond) // a late duplicate would show up now
			if err := c.App.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM outbox_events WHERE type = 'match.expired'`).Scan(&events); err != nil {
				t.Fatal(err)
			}
			if events != n {
				t.Fatalf("%d match.expired events for %d requests", events, n)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests still pending", pending)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
