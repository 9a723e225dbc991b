package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// TestWebhookFaults: the endpoint first answers the challenge wrong, then
// fails each delivery's first attempts (500, a timeout, a connection reset)
// before accepting it; the service process is stopped in the middle and a
// new one started. In the end every event is in the receiver's success log
// (after dedup by webhook-id), and the attempts were spaced at least as the
// (shortened) schedule says.
func TestWebhookFaults(t *testing.T) {
	schedule := []time.Duration{time.Second, time.Second, 2 * time.Second, 2 * time.Second}
	for _, d := range testdb.Engines() {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			ca := apptest.NewCA(t)
			rcv := apptest.NewReceiver(t, ca)
			dbURL := testdb.NewURL(t, d)
			env := apptest.WebhookEnv(ca, "1s,1s,2s,2s", "1s")
			node := apptest.StartNode(t, dbURL, env...)
			a := apptest.OpenApp(t, dbURL)

			var mu sync.Mutex
			attempts := map[string][]time.Time{}
			success := map[string]int{}
			rcv.SetRespond(func(w http.ResponseWriter, r *http.Request, body []byte) int {
				id := r.Header.Get("webhook-id")
				mu.Lock()
				attempts[id] = append(attempts[id], time.Now())
				n := len(attempts[id])
				mu.Unlock()
				switch n {
				case 1:
					w.WriteHeader(500)
					return 500
				case 2:
					time.Sleep(1500 * time.Millisecond) // past the 1 s timeout
					return 0
				case 3:
					apptest.ResetConnection(w)
					return 0
				}
				w.WriteHeader(200)
				mu.Lock()
				success[id]++
				mu.Unlock()
				return 200
			})
			wrong := true
			rcv.SetChallenge(func(c string) string {
				if wrong {
					return "not-" + c
				}
				return c
			})

			ent, err := a.Users.Register(ctx, users.Registration{Email: "ent@example.com", Username: "ent", Password: apptest.Password})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Users.SetTier(ctx, ent.ID, "enterprise", nil); err != nil {
				t.Fatal(err)
			}
			key := keyOf(t, a, ent.ID, "read", "write", "admin")
			r := nodeAPI(t, node.URL, "POST", "/api/v1/webhooks", key, `{"url":"`+rcv.URL+`","events":["user.*"]}`)
			if r.Status != 201 {
				t.Fatalf("create: %d %s", r.Status, r.Body)
			}
			h := r.JSON(t)
			id := str(h, "id")

			// The wrong answer leaves it pending, with the attempt visible.
			apptest.WaitFor(t, "the first challenge", func() bool {
				return nodeAPI(t, node.URL, "GET", "/api/v1/webhooks/"+id, key, "").JSON(t)["last_verification"] != nil
			})
			got := nodeAPI(t, node.URL, "GET", "/api/v1/webhooks/"+id, key, "").JSON(t)
			v, _ := got["last_verification"].(map[string]any)
			if got["status"] != "pending_verification" || !strings.Contains(str(v, "error"), "challenge") || !strings.Contains(str(v, "response_body"), "not-") {
				t.Fatalf("after a wrong answer: %v", got)
			}
			wrong = false
			r = nodeAPI(t, node.URL, "POST", "/api/v1/webhooks/"+id+"/verify", key, "")
			if r.Status != 200 || str(r.JSON(t), "status") != "active" {
				t.Fatalf("verify again: %d %s", r.Status, r.Body)
			}

			register := func(name string) {
				if _, err := a.Users.Register(ctx, users.Registration{Email: name + "@example.com", Username: name, Password: apptest.Password}); err != nil {
					t.Fatal(err)
				}
			}
			for _, n := range []string{"user1", "user2", "user3", "user4", "user5"} {
				register(n)
			}
			// Stop the service once every event failed its first attempt.
			apptest.WaitFor(t, "first attempts", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(attempts) >= 5
			})
			node.Stop(t)
			for _, n := range []string{"user6", "user7"} { // recorded while no node runs
				register(n)
			}
			node = apptest.StartNode(t, dbURL, env...)

			apptest.WaitUpTo(t, 90*time.Second, "every event to succeed", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(success) >= 7
			})
			mu.Lock()
			defer mu.Unlock()
			for wid, times := range attempts {
				if success[wid] < 1 {
					t.Errorf("%s never succeeded (%d attempts)", wid, len(times))
				}
				if success[wid] > 1 {
					t.Logf("%s succeeded %d times (at-least-once; dedup by webhook-id)", wid, success[wid])
				}
				for i := 1; i < len(times) && i <= len(schedule); i++ {
					if gap := times[i].Sub(times[i-1]); gap < schedule[i-1]-50*time.Millisecond {
						t.Errorf("%s: attempt %d came %s after the previous one, want at least %s", wid, i+1, gap, schedule[i-1])
					}
				}
			}
			if len(success) != 7 {
				t.Errorf("%d distinct events succeeded, want 7", len(success))
			}

			// The delivery log tells the same story (once the last outcomes
			// are written: the receiver answers before the service records).
			mu.Unlock()
			apptest.WaitFor(t, "the log to show every success", func() bool {
				r := nodeAPI(t, node.URL, "GET", "/api/v1/webhooks/"+id+"/deliveries?status=succeeded&limit=100", key, "")
				var l struct{ Data []any }
				_ = json.Unmarshal(r.Body, &l)
				return len(l.Data) == 7
			})
			mu.Lock()
			r = nodeAPI(t, node.URL, "GET", "/api/v1/webhooks/"+id+"/deliveries?limit=100", key, "")
			var log struct {
				Data []struct {
					Status   string `json:"status"`
					Attempts []struct {
						StatusCode *int   `json:"status_code"`
						Error      string `json:"error"`
					} `json:"attempts"`
				}
			}
			if err := json.Unmarshal(r.Body, &log); err != nil || len(log.Data) != 7 {
				t.Fatalf("log: %d %s", r.Status, r.Body)
			}
			for _, dl := range log.Data {
				if dl.Status != "succeeded" || len(dl.Attempts) != 4 {
					t.Errorf("delivery: %+v", dl)
					continue
				}
				if c := dl.Attempts[0].StatusCode; c == nil || *c != 500 {
					t.Errorf("attempt 1: %+v", dl.Attempts[0])
				}
				if !strings.HasPrefix(dl.Attempts[1].Error, "timeout") || !strings.Contains(dl.Attempts[2].Error, "reset") {
					t.Errorf("attempts 2 and 3: %+v", dl.Attempts)
				}
			}
		})
	}
}
