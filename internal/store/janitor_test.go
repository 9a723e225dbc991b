package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/sessions"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

func TestPurgeExpired(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		u, err := users.NewService(store.NewUsers(db), clk).Register(ctx, users.Registration{Email: "a@example.com", Username: "aaa", Password: "long enough now"})
		if err != nil {
			t.Fatal(err)
		}
		ss := sessions.NewService(store.NewSessions(db), clk)
		old, _ := ss.Start(ctx, u.ID)
		clk.Advance(sessions.TTL - time.Hour)
		fresh, _ := ss.Start(ctx, u.ID)
		clk.Advance(2 * time.Hour)
		n, err := db.PurgeExpired(ctx, clk.Now(), store.DefaultRetention)
		if err != nil {
			t.Fatal(err)
		}
		if n["web_sessions"] != 1 {
			t.Fatalf("purged %v, want one session", n)
		}
		if id, _ := ss.User(ctx, fresh); id != u.ID {
			t.Error("the live session was purged")
		}
		if id, _ := ss.User(ctx, old); id != "" {
			t.Error("the expired session still signs in")
		}
	})
}
