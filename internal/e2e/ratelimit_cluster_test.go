package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/ratelimit/redistest"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// freeInterval is what one request of a Free account costs: 3600 s / 1000.
const freeInterval = 3600 * time.Millisecond

// TestRateLimitThreeNodes: a fresh Free key sends 1,100 requests round robin
// over three nodes counting in one Redis, as fast as it can. Exactly 1,000
// plus the refill earned meanwhile get through (within one request), the
// rest get 429 with the headers of the document, and the allowance comes
// back at one request per 3.6 s.
func TestRateLimitThreeNodes(t *testing.T) {
	rds := redistest.StartServer(t)
	c := apptest.StartCluster(t, 3, "MATCHPOINT_REDIS_URL="+rds.URL)
	urls := urlsOf(c)
	u, err := c.App.Users.Register(t.Context(), users.Registration{Email: "free@example.com", Username: "free", Password: apptest.Password})
	if err != nil {
		t.Fatal(err)
	}
	key := keyOf(t, c.App, u.ID, "read")

	start := time.Now()
	answers := roundRobin(urls, 1100, 8, nil, func(_ int, base string) loadReply {
		return call(base, "GET", "/v1/users/me", key, "")
	})
	elapsed := time.Since(start)

	allowed, perNode := 0, make([]int, len(urls))
	remaining := map[int]bool{}
	for _, a := range answers {
		if a.err != nil {
			t.Fatalf("node %d: %v", a.node, a.err)
		}
		if a.header.Get("X-RateLimit-Limit") != "1000" || a.header.Get("RateLimit-Policy") != `"hourly";q=1000;w=3600` {
			t.Fatalf("node %d answered %d with limit %q, policy %q", a.node, a.status, a.header.Get("X-RateLimit-Limit"), a.header.Get("RateLimit-Policy"))
		}
		r, err := strconv.Atoi(a.header.Get("X-RateLimit-Remaining"))
		if err != nil {
			t.Fatalf("X-RateLimit-Remaining %q", a.header.Get("X-RateLimit-Remaining"))
		}
		reset, err := strconv.ParseInt(a.header.Get("X-RateLimit-Reset"), 10, 64)
		if err != nil || reset < start.Unix() || reset > time.Now().Add(time.Hour).Unix()+1 {
			t.Fatalf("X-RateLimit-Reset %q, want a Unix time within the coming hour", a.header.Get("X-RateLimit-Reset"))
		}
		switch a.status {
		case 200:
			allowed++
			perNode[a.node]++
			remaining[r] = true
		case 429:
			checkRefused(t, a, r)
		default:
			t.Fatalf("node %d answered %d: %s", a.node, a.status, a.body)
		}
	}
	refill := int(elapsed / freeInterval)
	t.Logf("1,100 requests in %s: %d allowed (refill earned meanwhile: %d), per node %v", elapsed.Round(time.Millisecond), allowed, refill, perNode)
	if allowed < 1000 || allowed < 1000+refill-1 || allowed > 1000+refill+1 {
		t.Errorf("%d allowed in %s, want 1000 + %d refilled, within one", allowed, elapsed, refill)
	}
	// One bucket for the three nodes: the total above is theirs together
	// (counted apart, each would have let its share through), and the
	// counts they reported went from 999 down to 0.
	if !remaining[999] || !remaining[0] || len(remaining) < 990 {
		t.Errorf("allowed requests reported %d distinct counts, 999 seen %v, 0 seen %v", len(remaining), remaining[999], remaining[0])
	}
	for i, n := range perNode {
		if n == 0 {
			t.Errorf("node %d allowed nothing: the requests were not spread", i)
		}
	}

	// Recovery at the refill rate. Poll until one more is allowed (at T),
	// then: nothing more until T + 3.6 s, one then, and only one.
	var at time.Time
	for i := 0; ; i++ {
		a := call(urls[i%3], "GET", "/v1/users/me", key, "")
		if a.status == 200 {
			at = time.Now()
			break
		}
		if a.err != nil || a.status != 429 || time.Since(start) > elapsed+2*freeInterval+5*time.Second {
			t.Fatalf("waiting for the refill: %v %d %s", a.err, a.status, a.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if a := call(urls[1], "GET", "/v1/users/me", key, ""); a.status != 429 {
		t.Fatalf("right after a refilled request: %d, want 429", a.status)
	}
	time.Sleep(time.Until(at.Add(freeInterval - 800*time.Millisecond)))
	if a := call(urls[2], "GET", "/v1/users/me", key, ""); a.status != 429 || a.header.Get("Retry-After") != "1" {
		t.Fatalf("0.8 s before the next refill: %d, Retry-After %q, want 429 and 1", a.status, a.header.Get("Retry-After"))
	}
	time.Sleep(time.Until(at.Add(freeInterval + 100*time.Millisecond)))
	if a := call(urls[0], "GET", "/v1/users/me", key, ""); a.status != 200 || a.header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("3.6 s after the last refill: %d, remaining %q, want one more allowed", a.status, a.header.Get("X-RateLimit-Remaining"))
	}
	if a := call(urls[1], "GET", "/v1/users/me", key, ""); a.status != 429 {
		t.Fatalf("second request after one refill: %d, want 429", a.status)
	}
}

// checkRefused checks a 429 of the account limit: headers and problem body.
func checkRefused(t *testing.T, a loadReply, remaining int) {
	t.Helper()
	retry, err := strconv.Atoi(a.header.Get("Retry-After"))
	if err != nil || retry < 1 || retry > 4 {
		t.Fatalf("429 with Retry-After %q, want 1 to 4 seconds (one request per 3.6 s)", a.header.Get("Retry-After"))
	}
	if remaining != 0 || !strings.HasPrefix(a.header.Get("RateLimit"), `"hourly";r=0;t=`) {
		t.Fatalf("429 with remaining %d, RateLimit %q", remaining, a.header.Get("RateLimit"))
	}
	if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Fatalf("429 with Content-Type %q", ct)
	}
	var p struct {
		Status int    `json:"status"`
		Code   string `json:"code"`
	}
	if err := json.Unmarshal(a.body, &p); err != nil || p.Status != 429 || p.Code != "rate_limited" {
		t.Fatalf("429 body %s", a.body)
	}
}

// TestRateLimitClusterRedisOutage: three nodes under load while their Redis
// is stopped and started again: no request fails, every reply carries its
// rate-limit headers, and the nodes count in Redis again once it is back.
func TestRateLimitClusterRedisOutage(t *testing.T) {
	rds := redistest.StartServer(t)
	c := apptest.StartCluster(t, 3, "MATCHPOINT_REDIS_URL="+rds.URL)
	urls := urlsOf(c)
	u, err := c.App.Users.Register(t.Context(), users.Registration{Email: "busy@example.com", Username: "busy", Password: apptest.Password})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.App.Users.SetTier(t.Context(), u.ID, "enterprise", nil); err != nil {
		t.Fatal(err)
	}
	key := keyOf(t, c.App, u.ID, "read")

	stop := make(chan struct{})
	done := make(chan []loadReply)
	go func() {
		done <- roundRobin(urls, -1, 4, stop, func(_ int, base string) loadReply {
			return call(base, "GET", "/v1/users/me", key, "")
		})
	}()
	time.Sleep(time.Second)
	down := time.Now()
	rds.Stop()
	time.Sleep(2 * time.Second)
	rds.Start(t)
	up := time.Now()
	// (The sample's own line: the metric's help text starts with "1 while".)
	apptest.WaitUpTo(t, 15*time.Second, "every node counting in Redis again", func() bool {
		for _, u := range urls {
			if !strings.Contains(string(call(u, "GET", "/metrics", "", "").body), "\nmatchpoint_rate_limit_redis_up 1\n") {
				return false
			}
		}
		return true
	})
	time.Sleep(500 * time.Millisecond)
	close(stop)
	answers := <-done

	during := 0
	for _, a := range answers {
		if a.err != nil || a.status != 200 {
			t.Fatalf("node %d at %s: %v %d %s", a.node, a.at.Format(time.StampMilli), a.err, a.status, a.body)
		}
		if a.header.Get("X-RateLimit-Limit") != "1000000" || a.header.Get("X-RateLimit-Remaining") == "" {
			t.Fatalf("node %d answered without its rate-limit headers: %v", a.node, a.header)
		}
		if a.at.After(down) && a.at.Before(up) {
			during++
		}
	}
	t.Logf("%d requests, %d of them while Redis was stopped", len(answers), during)
	if during < 10 {
		t.Fatalf("only %d requests answered while Redis was stopped: the outage was not under load", during)
	}
	// Back on Redis: the bucket is there again, shared by the nodes.
	opt, _ := redis.ParseURL(rds.URL)
	rc := redis.NewClient(opt)
	defer rc.Close()
	// Each node counts in Redis again: its requests run the limiter's script
	// there. (A bucket's key expires as soon as the bucket is full again, a
	// few milliseconds at this tier, so the calls are counted, not the keys.)
	scripts := func() int {
		info, err := rc.Info(context.Background(), "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, line := range strings.Split(info, "\n") {
			if strings.HasPrefix(line, "cmdstat_eval") {
				var calls int
				if _, err := fmt.Sscanf(line[strings.Index(line, "calls="):], "calls=%d", &calls); err == nil {
					n += calls
				}
			}
		}
		return n
	}
	for i, u := range urls {
		before := scripts()
		call(u, "GET", "/v1/users/me", key, "")
		if after := scripts(); after <= before {
			var lines []string
			for _, l := range strings.Split(c.Nodes[i].Log(), "\n") {
				if strings.Contains(l, "rate limits") {
					lines = append(lines, l)
				}
			}
			t.Errorf("node %d did not count in Redis after it came back (%d script calls, then %d)\n%s", i, before, after, strings.Join(lines, "\n"))
		}
	}
}
