package ratelimit

import (
	"context"
	"hash/maphash"
	"sync"

	"github.com/matchpoint-api/matchpoint/internal/clock"
)

// Local keeps the buckets in this process: right for one node, and the
// fallback of Redis when it cannot be reached.
type Local struct {
	clock  clock.Clock
	seed   maphash.Seed
	shards [16]shard
}

// shard is a part of the buckets under its own lock, so concurrent requests
// of different accounts seldom wait for each other.
type shard struct {
	mu      sync.Mutex
	buckets map[string]state
	sweepAt int // sweep full buckets when the map grows past this
}

// NewLocal returns an in-process limiter reading time from c.
func NewLocal(c clock.Clock) *Local {
	l := &Local{clock: c, seed: maphash.MakeSeed()}
	for i := range l.shards {
		l.shards[i].buckets = map[string]state{}
		l.shards[i].sweepAt = 1024
	}
	return l
}

// Allow counts one request of key against limit requests per Period.
func (l *Local) Allow(_ context.Context, key string, limit int64) (Decision, error) {
	now, limit := l.clock.Now().UnixMicro(), clamp(limit)
	sh := &l.shards[maphash.String(l.seed, key)%uint64(len(l.shards))]
	sh.mu.Lock()
	prev := sh.buckets[key]
	next, ok := step(prev, now, limit)
	if ok || next.emission != prev.emission {
		sh.buckets[key] = next
		if len(sh.buckets) > sh.sweepAt {
			sh.sweep(now)
		}
	}
	sh.mu.Unlock()
	return decide(next, now, limit, ok), nil
}

// sweep forgets buckets that are full again (a missing bucket is a full
// one), so the map holds only the keys active within the last hour.
func (sh *shard) sweep(now int64) {
	for k, s := range sh.buckets {
		if s.tat <= now {
			delete(sh.buckets, k)
		}
	}
	sh.sweepAt = max(2*len(sh.buckets), 1024)
}
