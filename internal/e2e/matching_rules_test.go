package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/matching"
	"github.com/matchpoint-api/matchpoint/internal/store"
)

func TestImpressionSuppression(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		me := s.Player(t, "viewer", tennis("intermediate", parisLat, parisLon))
		other := s.Player(t, "shown", tennis("intermediate", parisLat+0.01, parisLon))
		k := keyOf(t, s.App, me.ID, "matching")
		for i := range 5 {
			if got := foundIDs(find(t, s, k, `{}`)); !slices.Equal(got, []string{other.ID}) {
				t.Fatalf("showing %d: %v", i+1, got)
			}
		}
		if got := foundIDs(find(t, s, k, `{}`)); len(got) != 0 {
			t.Fatalf("shown a sixth time: %v", got)
		}
		s.Clock.Advance(7*24*time.Hour + time.Minute)
		if got := foundIDs(find(t, s, k, `{}`)); !slices.Equal(got, []string{other.ID}) {
			t.Fatalf("after 7 days: %v", got)
		}
	})
}

func TestPendingCap(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		ctx := context.Background()
		// A service with a cap of 2 over the same database.
		svc := matching.NewService(store.NewMatching(s.App.DB), s.Clock, matching.Settings{PendingCap: 2})
		star := s.Player(t, "popular", tennis("intermediate", parisLat, parisLon))
		me := s.Player(t, "latecomer", tennis("intermediate", parisLat+0.01, parisLon))
		var fans []string
		for i := range 2 {
			fan := s.Player(t, fmt.Sprintf("fan%d", i), tennis("intermediate", parisLat-0.01*float64(i+1), parisLon))
			fans = append(fans, fan.ID)
		}
		found := func() []string {
			cs, _, err := svc.Find(ctx, me.ID, matching.Criteria{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, c := range cs {
				out = append(out, c.User.ID)
			}
			return out
		}
		if !slices.Contains(found(), star.ID) {
			t.Fatal("not shown before any request")
		}
		var first *matching.Match
		for _, f := range fans {
			m, err := svc.Create(ctx, f, matching.Request{UserID: star.ID})
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = m
			}
		}
		if slices.Contains(found(), star.ID) {
			t.Fatal("shown while holding 2 unanswered requests")
		}
		if _, err := svc.Decline(ctx, star.ID, first.ID); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(found(), star.ID) {
			t.Fatal("not shown again after answering")
		}
	})
}

// TestExpiryOnce runs expiry passes side by side (as several nodes would):
// every due request expires once, with one event each.
func TestExpiryOnce(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		hub := s.Player(t, "hub", tennis("intermediate", parisLat, parisLon))
		for i := range 30 {
			p := s.Player(t, fmt.Sprintf("asker%02d", i), tennis("intermediate", parisLat+0.001*float64(i), parisLon))
			s.Match(t, p, hub, false)
		}
		s.Clock.Advance(8 * 24 * time.Hour)
		var wg sync.WaitGroup
		var mu sync.Mutex
		total := 0
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				svc := matching.NewService(store.NewMatching(s.App.DB), s.Clock, matching.Settings{})
				n, err := svc.ExpireDue(context.Background())
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				total += n
				mu.Unlock()
			}()
		}
		wg.Wait()
		n := 0
		for _, e := range matchEvents(t, s) {
			if e.Type == "match.expired" {
				n++
			}
		}
		if total != 30 || n != 30 {
			t.Fatalf("expired %d, events %d, want 30 each", total, n)
		}
	})
}
