package ratelimit_test

import (
	"bytes"
	"context"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/ratelimit"
	"github.com/matchpoint-api/matchpoint/internal/ratelimit/redistest"
)

func newRedis(t *testing.T, url string, clk clock.Clock, log *slog.Logger) *ratelimit.Redis {
	t.Helper()
	r, err := ratelimit.NewRedis(ratelimit.RedisOptions{URL: url, Prefix: redistest.Prefix(t, url), Clock: clk, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestRedisAnswersLikeLocal runs the same random sequence of requests, limit
// changes and clock moves against both limiters: every decision is the same.
func TestRedisAnswersLikeLocal(t *testing.T) {
	url := redistest.URL(t)
	clk := clock.NewFake(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	local, remote := ratelimit.NewLocal(clk), newRedis(t, url, clk, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	keys := []string{"a", "b", "c"}
	limits := []int64{1, 3, 7, 10, 1000, 10000}
	for i := 0; i < 3000; i++ {
		switch rng.IntN(10) {
		case 0:
			clk.Advance(time.Duration(rng.Int64N(int64(20 * time.Minute))))
		case 1:
			clk.Advance(time.Duration(rng.Int64N(int64(5 * time.Second))))
		}
		key, limit := keys[rng.IntN(len(keys))], limits[rng.IntN(len(limits))]
		want, err := local.Allow(context.Background(), key, limit)
		if err != nil {
			t.Fatal(err)
		}
		got, err := remote.Allow(context.Background(), key, limit)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("step %d, key %s, limit %d: Redis %+v, local %+v", i, key, limit, got, want)
		}
	}
	if !remote.Up() {
		t.Fatal("the Redis limiter fell back to local counting: the comparison compared local with local")
	}
}

// TestRedisConcurrent: many goroutines on one bucket through Redis get
// exactly the limit, no more: the script leaves no read-modify-write race.
func TestRedisConcurrent(t *testing.T) {
	url := redistest.URL(t)
	clk := clock.NewFake(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	// Two limiters, like two nodes, over one Redis.
	prefix := redistest.Prefix(t, url)
	var nodes []*ratelimit.Redis
	for range 2 {
		r, err := ratelimit.NewRedis(ratelimit.RedisOptions{URL: url, Prefix: prefix, Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		nodes = append(nodes, r)
	}
	var mu sync.Mutex
	allowed := 0
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				d, err := nodes[g%2].Allow(context.Background(), "shared", 1000)
				if err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if allowed != 1000 {
		t.Fatalf("%d of 1600 allowed, want exactly 1000", allowed)
	}
	for _, n := range nodes {
		if !n.Up() {
			t.Fatal("a node fell back to local counting during the test")
		}
	}
}

// syncBuffer is a log destination tests read while the limiter writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRedisFailover: with Redis gone, requests are still decided (locally,
// with the same arithmetic), the outage is logged once, and once Redis is
// back a probe made within ProbeEvery of clock time returns the limiter to
// it.
func TestRedisFailover(t *testing.T) {
	url := redistest.URL(t)
	proxy, via := redistest.NewProxy(t, url)
	clk := clock.NewFake(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	var logs syncBuffer
	r := newRedis(t, via, clk, slog.New(slog.NewTextHandler(&logs, nil)))
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		if d, _ := r.Allow(ctx, "k", 10); !d.Allowed {
			t.Fatalf("request %d refused", i)
		}
	}
	if d, _ := r.Allow(ctx, "k", 10); d.Allowed || !r.Up() {
		t.Fatalf("11th of 10 through Redis: %+v, up %v", d, r.Up())
	}

	proxy.Stop()
	// Local counting starts from a fresh bucket: 10 allowed, the 11th not.
	for i := 0; i < 10; i++ {
		d, err := r.Allow(ctx, "k", 10)
		if err != nil || !d.Allowed {
			t.Fatalf("request %d with Redis down: %+v %v, want allowed on local limits", i, d, err)
		}
	}
	if d, err := r.Allow(ctx, "k", 10); err != nil || d.Allowed || d.RetryAfter != 6*time.Minute {
		t.Fatalf("11th with Redis down: %+v %v, want refused by the local limit", d, err)
	}
	if r.Up() {
		t.Fatal("Up() with Redis stopped")
	}
	if n := strings.Count(logs.String(), "Redis is unreachable"); n != 1 {
		t.Fatalf("outage logged %d times, want once:\n%s", n, logs.String())
	}

	proxy.Start(t)
	// No probe before ProbeEvery has passed on the limiter's clock.
	r.Allow(ctx, "k", 10)
	time.Sleep(50 * time.Millisecond)
	if r.Up() {
		t.Fatal("went back to Redis before the probe interval")
	}
	clk.Advance(ratelimit.ProbeEvery)
	r.Allow(ctx, "k", 10) // starts the probe
	deadline := time.Now().Add(5 * time.Second)
	for !r.Up() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !r.Up() {
		t.Fatalf("still on local limits with Redis back:\n%s", logs.String())
	}
	// Redis kept its own count: still refused, one more in 6 minutes less
	// the second that passed.
	d, err := r.Allow(ctx, "k", 10)
	if err != nil || d.Allowed || d.RetryAfter != 6*time.Minute-ratelimit.ProbeEvery {
		t.Fatalf("back on Redis: %+v %v", d, err)
	}
	if !strings.Contains(logs.String(), "Redis is back") {
		t.Fatalf("return not logged:\n%s", logs.String())
	}
}
