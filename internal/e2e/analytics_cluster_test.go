package e2e

import (
	"context"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/httpapi"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// TestAnalyticsAcrossNodes: two service processes count one account's
// requests, sent to both at once, into one PostgreSQL. Every request is
// counted exactly once: the nodes' additive flushes land in the same rows,
// and a node stopped with SIGTERM flushes what it counted last.
func TestAnalyticsAcrossNodes(t *testing.T) {
	c := apptest.StartCluster(t, 2, "MATCHPOINT_ANALYTICS_FLUSH_INTERVAL=150ms")
	ctx := context.Background()
	u, err := c.App.Users.Register(ctx, users.Registration{Email: "dev@example.com", Username: "dev", Password: apptest.Password})
	if err != nil {
		t.Fatal(err)
	}
	k, key, err := c.App.Keys.Create(ctx, apikeys.Spec{UserID: u.ID, Name: "load", Scopes: []string{"read"}})
	if err != nil {
		t.Fatal(err)
	}
	const perWorker, workers = 60, 6
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				node := c.Nodes[(w+i)%2]
				if i%3 == 2 {
					if r := nodeAPI(t, node.URL, "GET", "/v1/users/me/verification", key, ""); r.Status != 404 {
						t.Errorf("verification: %d", r.Status)
					}
					continue
				}
				if r := nodeAPI(t, node.URL, "GET", "/v1/users/me", key, ""); r.Status != 200 {
					t.Errorf("me: %d", r.Status)
				}
			}
		}()
	}
	wg.Wait()
	// The second node stops at once: what it has not flushed yet goes in
	// on its way out.
	c.Nodes[1].Stop(t)
	const total = perWorker * workers
	wantMe, wantVerification := int64(total*2/3), int64(total/3)
	now := time.Now().UTC()
	q := url.Values{"from": {now.Add(-2 * time.Hour).Format(time.RFC3339)}, "to": {now.Add(2 * time.Hour).Format(time.RFC3339)},
		"granularity": {"hour"}, "group_by": {"operation"}}
	counts := func() map[string][2]int64 {
		r := nodeAPI(t, c.Nodes[0].URL, "GET", "/v1/analytics/usage?"+q.Encode(), key, "")
		got := decode[httpapi.List[httpapi.UsageBucket]](t, r, 200)
		out := map[string][2]int64{}
		for _, b := range got.Data {
			v := out[b.Group]
			out[b.Group] = [2]int64{v[0] + b.Requests, v[1] + b.Errors4xx}
		}
		return out
	}
	apptest.WaitFor(t, "every request counted", func() bool {
		got := counts()
		// The usage requests themselves are counted too: at least the load.
		return got["GET /v1/users/me"][0] == wantMe && got["GET /v1/users/me/verification"][0] == wantVerification
	})
	time.Sleep(500 * time.Millisecond) // a count added twice would show up now
	got := counts()
	if got["GET /v1/users/me"] != [2]int64{wantMe, 0} || got["GET /v1/users/me/verification"] != [2]int64{wantVerification, wantVerification} {
		t.Errorf("counts = %v, want %d and %d (all 4xx)", got, wantMe, wantVerification)
	}
	// The daily rollup holds the same.
	var daily int64
	if err := c.App.DB.QueryRowContext(ctx, `SELECT SUM(requests) FROM analytics_usage WHERE granularity = 'd' AND user_id = $1
		AND credential = $2 AND operation IN ('GET /v1/users/me', 'GET /v1/users/me/verification')`, u.ID, k.ID).Scan(&daily); err != nil {
		t.Fatal(err)
	}
	if daily != total {
		t.Errorf("daily rollup = %d, want %d", daily, total)
	}
}
