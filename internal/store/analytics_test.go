package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/analytics"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
)

// TestRecorderFlush: counts reach the rollups once; a flush that fails
// keeps them for the next; two recorders (two nodes) add into the same rows.
func TestRecorderFlush(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2030, 5, 6, 10, 30, 0, 0, time.UTC))
		st := store.NewAnalytics(db)
		a, b := analytics.NewRecorder(st, clk, nil), analytics.NewRecorder(st, clk, nil)
		for range 3 {
			a.Record("usr_a", "key_a", "GET /v1/users/me", "usr_a", 200, 2*time.Millisecond)
		}
		b.Record("usr_a", "key_a", "GET /v1/users/me", "usr_a", 503, 40*time.Millisecond)
		dead, cancel := context.WithCancel(ctx)
		cancel()
		if err := a.Flush(dead); err == nil {
			t.Fatal("a flush with a cancelled context succeeded")
		}
		a.Record("usr_a", "key_a", "GET /v1/users/me", "usr_a", 404, time.Millisecond)
		clk.Advance(time.Hour) // the next hour, the same day
		a.Record("usr_a", "key_a", "GET /v1/users/me", "", 200, time.Millisecond)
		for _, r := range []*analytics.Recorder{a, b} {
			if err := r.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Flush(ctx); err != nil { // nothing new: adds nothing
			t.Fatal(err)
		}
		day := time.Date(2030, 5, 6, 0, 0, 0, 0, time.UTC)
		hours, err := st.Usage(ctx, "usr_a", "h", day, day.Add(24*time.Hour), analytics.ByNone)
		if err != nil {
			t.Fatal(err)
		}
		if len(hours) != 2 || hours[0].Requests != 5 || hours[0].Errors4xx != 1 || hours[0].Errors5xx != 1 || hours[1].Requests != 1 {
			t.Fatalf("hours = %+v", hours)
		}
		if p99 := hours[0].Latency.Quantile(0.99); p99 < 39 || p99 > 41 {
			t.Errorf("p99 = %v ms, want 40", p99)
		}
		days, err := st.Usage(ctx, "usr_a", "d", day, day.Add(24*time.Hour), analytics.ByOperation)
		if err != nil {
			t.Fatal(err)
		}
		if len(days) != 1 || days[0].Requests != 6 || days[0].Group != "GET /v1/users/me" {
			t.Fatalf("days = %+v", days)
		}
		var active int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM analytics_active_users`).Scan(&active); err != nil || active != 1 {
			t.Errorf("active users = %d %v", active, err)
		}
	})
}
