package ratelimit

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clock"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func allow(t *testing.T, l Limiter, key string, limit int64) Decision {
	t.Helper()
	d, err := l.Allow(context.Background(), key, limit)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// limiterCase runs the arithmetic checks on a limiter built over a fake
// clock; the Redis tests run the same cases.
type limiterCase struct {
	name string
	run  func(t *testing.T, l Limiter, clk *clock.Fake)
}

var limiterCases = []limiterCase{
	{"free account: 1000 at once, then one per 3.6 s", func(t *testing.T, l Limiter, clk *clock.Fake) {
		for i := int64(1); i <= 1000; i++ {
			d := allow(t, l, "acct", 1000)
			if !d.Allowed || d.Remaining != 1000-i || d.Limit != 1000 {
				t.Fatalf("request %d: %+v, want allowed with %d remaining", i, d, 1000-i)
			}
		}
		d := allow(t, l, "acct", 1000)
		if d.Allowed || d.Remaining != 0 || d.RetryAfter != 3600*time.Millisecond || d.ResetAfter != time.Hour {
			t.Fatalf("request 1001: %+v, want refused, retry after exactly 3.6 s, full again in 1 h", d)
		}
		clk.Advance(3599 * time.Millisecond)
		if d := allow(t, l, "acct", 1000); d.Allowed || d.RetryAfter != time.Millisecond {
			t.Fatalf("1 ms early: %+v, want refused with 1 ms to wait", d)
		}
		clk.Advance(time.Millisecond)
		if d := allow(t, l, "acct", 1000); !d.Allowed || d.Remaining != 0 || d.NextAfter != 3600*time.Millisecond {
			t.Fatalf("after 3.6 s: %+v, want exactly one allowed", d)
		}
		if d := allow(t, l, "acct", 1000); d.Allowed {
			t.Fatalf("second after 3.6 s: %+v, want refused", d)
		}
		// Other accounts have buckets of their own.
		if d := allow(t, l, "other", 1000); !d.Allowed || d.Remaining != 999 {
			t.Fatalf("another account: %+v", d)
		}
	}},
	{"no window boundary lets twice the limit through", func(t *testing.T, l Limiter, clk *clock.Fake) {
		// Spend everything just before the top of an hour, then hammer just
		// after it: only the refill earned meanwhile gets through. Over any
		// span of one hour, at most limit + refill requests are allowed.
		clk.Set(t0.Add(-time.Second))
		n := 0
		for i := 0; i < 250; i++ {
			if allow(t, l, "edge", 100).Allowed {
				n++
			}
		}
		if n != 100 {
			t.Fatalf("before the hour: %d allowed, want 100", n)
		}
		clk.Set(t0.Add(time.Second)) // 2 s later; one request costs 36 s
		for i := 0; i < 250; i++ {
			if allow(t, l, "edge", 100).Allowed {
				n++
			}
		}
		if n != 100 {
			t.Fatalf("across the hour: %d allowed, want still 100", n)
		}
		// In the hour from the first burst on, at most 100 + 3600/36 = 200.
		for s := 2; s < 3599; s++ {
			clk.Set(t0.Add(time.Duration(s-1) * time.Second))
			if allow(t, l, "edge", 100).Allowed {
				n++
			}
		}
		// The first refilled request fits 36 s after the burst (at t0+35 s),
		// then one every 36 s until t0+3597 s: 99 of them.
		if n != 199 {
			t.Fatalf("in one hour: %d allowed, want 100 at once plus 99 refilled", n)
		}
	}},
	{"refill is continuous: remaining grows one per interval", func(t *testing.T, l Limiter, clk *clock.Fake) {
		for i := 0; i < 10; i++ {
			allow(t, l, "r", 10) // 10 per hour: one per 6 minutes
		}
		clk.Advance(18 * time.Minute)
		d := allow(t, l, "r", 10)
		if !d.Allowed || d.Remaining != 2 || d.ResetAfter != 48*time.Minute || d.NextAfter != 6*time.Minute {
			t.Fatalf("after 18 min: %+v, want 3 earned, one spent, 8 counted: full in 48 min", d)
		}
		clk.Advance(time.Hour)
		if d := allow(t, l, "r", 10); d.Remaining != 9 {
			t.Fatalf("after an idle hour: %+v, want a full bucket again", d)
		}
	}},
	{"a change of limit applies to the next request", func(t *testing.T, l Limiter, clk *clock.Fake) {
		for i := 0; i < 1000; i++ {
			allow(t, l, "up", 1000)
		}
		if allow(t, l, "up", 1000).Allowed {
			t.Fatal("free account over its limit allowed")
		}
		// Upgraded to Pro: the 1000 already spent count, 9000 are left.
		d := allow(t, l, "up", 10000)
		if !d.Allowed || d.Remaining != 8999 || d.Limit != 10000 {
			t.Fatalf("after the upgrade: %+v, want 8999 remaining of 10000", d)
		}
		for i := 0; i < 5000; i++ {
			allow(t, l, "up", 10000)
		}
		// Back to Free with 6001 spent: capped at a full Free hour.
		d = allow(t, l, "up", 1000)
		if d.Allowed || d.RetryAfter != 3600*time.Millisecond || d.ResetAfter != time.Hour {
			t.Fatalf("after the downgrade: %+v, want refused, one more in 3.6 s", d)
		}
		clk.Advance(3600 * time.Millisecond)
		if d := allow(t, l, "up", 1000); !d.Allowed {
			t.Fatalf("3.6 s after the downgrade: %+v, want one allowed", d)
		}
	}},
	{"limits that do not divide the hour", func(t *testing.T, l Limiter, clk *clock.Fake) {
		n := 0
		for i := 0; i < 20; i++ {
			if allow(t, l, "odd", 7).Allowed {
				n++
			}
		}
		if n != 7 {
			t.Fatalf("%d allowed at once, want 7", n)
		}
		clk.Advance(time.Hour)
		if d := allow(t, l, "odd", 7); !d.Allowed || d.Remaining != 6 {
			t.Fatalf("after an hour: %+v", d)
		}
		if d := allow(t, l, "big", 1_000_000_000_000); !d.Allowed || d.Remaining != 3_600_000_000-1 || d.Limit != 3_600_000_000 {
			// More than one per microsecond counts as one per microsecond.
			t.Fatalf("huge limit: %+v", d)
		}
	}},
}

func TestLocal(t *testing.T) {
	for _, c := range limiterCases {
		t.Run(c.name, func(t *testing.T) {
			clk := clock.NewFake(t0)
			c.run(t, NewLocal(clk), clk)
		})
	}
}

// TestLocalSweep: buckets that are full again are forgotten, so memory holds
// only the keys of the last hour.
func TestLocalSweep(t *testing.T) {
	clk := clock.NewFake(t0)
	l := NewLocal(clk)
	for i := 0; i < 40000; i++ {
		allow(t, l, "old"+strconv.Itoa(i), 1000)
	}
	clk.Advance(time.Hour)
	for i := 0; i < 40000; i++ {
		allow(t, l, "new"+strconv.Itoa(i), 1000)
	}
	total := 0
	for i := range l.shards {
		total += len(l.shards[i].buckets)
	}
	if total > 40000+16*1024 {
		t.Fatalf("%d buckets kept, want the stale ones swept", total)
	}
}
