package e2e

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// TestWebhookClusterDelivery: two service processes over one PostgreSQL
// deliver a stream of 10,000 events: none lost, none delivered twice.
func TestWebhookClusterDelivery(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 deliveries")
	}
	ca := apptest.NewCA(t)
	rcv := apptest.NewReceiver(t, ca)
	var mu sync.Mutex
	count := map[string]int{}
	rcv.SetRespond(func(w http.ResponseWriter, r *http.Request, body []byte) int {
		mu.Lock()
		count[r.Header.Get("webhook-id")]++
		mu.Unlock()
		w.WriteHeader(200)
		return 200
	})
	c := apptest.StartCluster(t, 2, apptest.WebhookEnv(ca, "", "")...)
	ctx := context.Background()
	ent, err := c.App.Users.Register(ctx, users.Registration{Email: "ent@example.com", Username: "ent", Password: apptest.Password})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.App.Users.SetTier(ctx, ent.ID, "enterprise", nil); err != nil {
		t.Fatal(err)
	}
	key := keyOf(t, c.App, ent.ID, "read", "write", "admin")
	r := nodeAPI(t, c.Nodes[0].URL, "POST", "/api/v1/webhooks", key, `{"url":"`+rcv.URL+`","events":["*"]}`)
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	id := str(r.JSON(t), "id")
	apptest.WaitFor(t, "verification", func() bool {
		return str(nodeAPI(t, c.Nodes[1].URL, "GET", "/api/v1/webhooks/"+id, key, "").JSON(t), "status") == "active"
	})

	const total = 10000
	wh := store.NewWebhooks(c.App.DB)
	sent := map[string]bool{}
	start := time.Now()
	for b := 0; b < total/250; b++ {
		evs := make([]*outbox.Event, 250)
		for i := range evs {
			n := b*250 + i
			ev, err := outbox.New(time.Now(), outbox.MatchCreated, ent.ID, "match", map[string]any{"id": fmt.Sprintf("mch_%d", n)})
			if err != nil {
				t.Fatal(err)
			}
			evs[i], sent[ev.ID] = &ev, true
		}
		if err := wh.AppendEvents(ctx, evs...); err != nil {
			t.Fatal(err)
		}
	}
	apptest.WaitUpTo(t, 3*time.Minute, "10,000 deliveries", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(count) >= total
	})
	elapsed := time.Since(start)
	time.Sleep(500 * time.Millisecond) // a late duplicate would show up now
	mu.Lock()
	defer mu.Unlock()
	for wid, n := range count {
		if !sent[wid] {
			t.Errorf("received unknown event %s", wid)
		}
		if n != 1 {
			t.Errorf("%s delivered %d times", wid, n)
		}
	}
	if len(count) != total {
		t.Errorf("received %d distinct events, want %d", len(count), total)
	}
	rows, err := c.App.DB.Query(`SELECT node, COUNT(*) FROM webhook_attempts GROUP BY node`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var node string
		var n int
		_ = rows.Scan(&node, &n)
		t.Logf("node %s made %d attempts", node, n)
	}
	t.Logf("%d events delivered in %s", total, elapsed.Round(time.Millisecond))
}
