package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// leaseTime is how long a webhook node's claim on its work lasts without
// renewal (internal/webhooks: event and delivery leases).
const leaseTime = 30 * time.Second

// TestClusterNodeKilledUnderLoad: three nodes take writes (sports events
// created round robin) whose webhooks go to a slow receiver; one node is
// killed with SIGKILL in the middle. Every write a node answered 201 is in
// the database, and every one of their webhooks arrives: the other nodes
// take over the dead node's leased work once its leases run out. (Run
// against the service before its body-read deadline fix, the first writes
// of the cold nodes were answered 499.)
func TestClusterNodeKilledUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a lease to expire")
	}
	ca := apptest.NewCA(t)
	rcv := apptest.NewReceiver(t, ca)
	var mu sync.Mutex
	got := map[string]int{} // sports event id -> deliveries of its event.created
	arrived := map[string]time.Time{}
	// Around the kill the receiver holds its answers, so that every node,
	// the victim too, has deliveries in hand when it dies.
	var holding atomic.Bool
	release := make(chan struct{})
	rcv.SetRespond(func(w http.ResponseWriter, r *http.Request, body []byte) int {
		if holding.Load() {
			select {
			case <-release:
			case <-r.Context().Done():
				return 0 // the dead node's attempt: it never got an answer
			}
		}
		var env struct {
			Type string `json:"type"`
			Data struct {
				Event struct {
					ID string `json:"id"`
				} `json:"event"`
			} `json:"data"`
		}
		_ = json.Unmarshal(body, &env)
		mu.Lock()
		got[env.Data.Event.ID]++
		if _, ok := arrived[env.Data.Event.ID]; !ok {
			arrived[env.Data.Event.ID] = time.Now()
		}
		mu.Unlock()
		w.WriteHeader(200)
		return 200
	})
	c := apptest.StartCluster(t, 3, apptest.WebhookEnv(ca, "", "")...)
	urls := urlsOf(c)
	ent, err := c.App.Users.Register(t.Context(), users.Registration{Email: "kill@example.com", Username: "kill", Password: apptest.Password})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.App.Users.SetTier(t.Context(), ent.ID, "enterprise", nil); err != nil {
		t.Fatal(err)
	}
	key := keyOf(t, c.App, ent.ID, "read", "write", "events")
	r := nodeAPI(t, urls[0], "POST", "/api/v1/webhooks", key, `{"url":"`+rcv.URL+`","events":["event.created"]}`)
	if r.Status != 201 {
		t.Fatalf("subscribe: %d %s", r.Status, r.Body)
	}
	hook := str(r.JSON(t), "id")
	apptest.WaitFor(t, "verification", func() bool {
		return str(nodeAPI(t, urls[1], "GET", "/api/v1/webhooks/"+hook, key, "").JSON(t), "status") == "active"
	})

	victim := c.Nodes[1]
	date := time.Now().Add(72 * time.Hour).UTC().Format(time.RFC3339)
	// One write on each node first: a node loads the gazetteer that places
	// an event on its first use, and the load should find the nodes warm.
	var warm []string
	for _, u := range urls {
		r := nodeAPI(t, u, "POST", "/v1/events", key, `{"title":"Warm-up","sport":"tennis","location":"Lyon","date":"`+date+`","max_participants":4}`)
		if r.Status != 201 {
			t.Fatalf("warm-up write: %d %s", r.Status, r.Body)
		}
		warm = append(warm, str(r.JSON(t), "id"))
	}
	stop := make(chan struct{})
	done := make(chan []loadReply)
	go func() {
		done <- roundRobin(urls, -1, 6, stop, func(i int, base string) loadReply {
			return call(base, "POST", "/v1/events", key, fmt.Sprintf(`{"title":"Doubles %d","sport":"tennis",`+
				`"location":"Parc de la Tête d'Or, Lyon","date":%q,"max_participants":4}`, i, date))
		})
	}()
	time.Sleep(3 * time.Second)
	holding.Store(true)
	time.Sleep(time.Second)
	victim.Kill()
	killed := time.Now()
	owner := fmt.Sprintf("%%-%d-%%", victim.PID())
	var held int
	if err := c.App.DB.QueryRow(`SELECT (SELECT COUNT(*) FROM webhook_deliveries WHERE lease_owner LIKE $1 AND status = 'pending')
		+ (SELECT COUNT(*) FROM outbox_pending WHERE lease_owner LIKE $1)`, owner).Scan(&held); err != nil {
		t.Fatal(err)
	}
	if rows, err := c.App.DB.Query(`SELECT lease_owner, status, COUNT(*) FROM webhook_deliveries GROUP BY 1, 2`); err == nil {
		for rows.Next() {
			var o, st string
			var n int
			_ = rows.Scan(&o, &st, &n)
			t.Logf("at the kill: %q %s %d (victim pid %d)", o, st, n, victim.PID())
		}
		rows.Close()
	}
	close(release)
	time.Sleep(2 * time.Second)
	close(stop)
	replies := <-done

	accepted := map[string]bool{}
	for _, id := range warm {
		accepted[id] = true
	}
	refused := 0
	for _, a := range replies {
		switch {
		case a.err != nil && a.node == 1:
			refused++ // the dead node: no answer, nothing promised
		case a.err != nil || a.status != 201:
			for _, line := range strings.Split(c.Nodes[a.node].Log(), "\n") {
				if strings.Contains(line, a.header.Get("Request-Id")) || strings.Contains(line, "ERROR") || strings.Contains(line, "WARN") {
					t.Log(line)
				}
			}
			t.Fatalf("node %d: %v %d %s", a.node, a.err, a.status, a.body)
		default:
			var ev struct{ ID string }
			if err := json.Unmarshal(a.body, &ev); err != nil || ev.ID == "" {
				t.Fatalf("201 without an id: %s", a.body)
			}
			accepted[ev.ID] = true
		}
	}
	t.Logf("%d writes accepted, %d requests to the dead node unanswered; it held %d leased outbox events and deliveries",
		len(accepted), refused, held)
	if held == 0 {
		t.Fatal("the killed node held no work: the test did not exercise a takeover")
	}
	for id := range accepted {
		if a := call(urls[2], "GET", "/v1/events/"+id, key, ""); a.status != 200 {
			t.Fatalf("accepted event %s: %d %v %s", id, a.status, a.err, a.body)
		}
	}
	apptest.WaitUpTo(t, leaseTime+30*time.Second, "every accepted write's webhook", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for id := range accepted {
			if got[id] == 0 {
				return false
			}
		}
		return true
	})
	mu.Lock()
	defer mu.Unlock()
	var last time.Time
	dups := 0
	for id := range accepted {
		if arrived[id].After(last) {
			last = arrived[id]
		}
		dups += got[id] - 1
	}
	t.Logf("last webhook %s after the kill (lease %s); %d delivered more than once (at least once after a crash)",
		last.Sub(killed).Round(time.Millisecond), leaseTime, dups)
	if last.Sub(killed) > leaseTime+15*time.Second {
		t.Errorf("the dead node's work was taken over %s after the kill, want within the lease time %s", last.Sub(killed), leaseTime)
	}
	var pending int
	if err := c.App.DB.QueryRow(`SELECT COUNT(*) FROM webhook_deliveries WHERE lease_owner LIKE $1 AND status = 'pending'`, owner).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending != 0 {
		t.Errorf("%d deliveries still leased to the dead node", pending)
	}
}
