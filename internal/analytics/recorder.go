package analytics

import (
	"cmp"
	"context"
	"hash/maphash"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clock"
)

// Key names one rollup row: an hour, the account the requests are billed
// to, the credential and the operation.
type Key struct {
	Start      time.Time // the first instant of the hour or day (UTC)
	AccountID  string
	Credential string // key_... (API key) or app_... (OAuth client)
	Operation  string // method and route pattern, like "GET /v1/users/me"
}

// Counts are what is added to a rollup row.
type Counts struct {
	Requests, Errors4xx, Errors5xx int64
	Latency                        Sketch
}

func (c *Counts) merge(o *Counts) {
	c.Requests += o.Requests
	c.Errors4xx += o.Errors4xx
	c.Errors5xx += o.Errors5xx
	for b, n := range o.Latency {
		c.Latency[b] += n
	}
}

// Row is one rollup row to add to the database.
type Row struct {
	Granularity string // "h" or "d"
	Key
	Counts
}

// Active is one user seen using the API on one day.
type Active struct {
	Day    time.Time
	UserID string
}

// Sink receives the counts of a flush, adding them to what is stored (an
// upsert that adds, so every node can flush into the same rows).
type Sink interface {
	AddUsage(ctx context.Context, rows []Row, active []Active) error
}

// shards spread the counting over several locks so that concurrent
// requests rarely wait on each other.
const shards = 32

type shard struct {
	mu     sync.Mutex
	counts map[Key]*Counts
	active map[Active]struct{}
	_      [40]byte // keep neighbouring shards' locks off one cache line
}

// Recorder counts API requests in memory and flushes the counts to a Sink
// in batches: on the request path, counting is a map update under one of
// many locks, with no allocation once a key has been seen this hour.
type Recorder struct {
	sink  Sink
	clock clock.Clock
	log   *slog.Logger
	seed  maphash.Seed
	sh    [shards]shard
	flush sync.Mutex // one flush at a time
}

// NewRecorder returns a recorder flushing into sink.
func NewRecorder(sink Sink, clk clock.Clock, log *slog.Logger) *Recorder {
	if log == nil {
		log = slog.Default()
	}
	r := &Recorder{sink: sink, clock: clk, log: log, seed: maphash.MakeSeed()}
	for i := range r.sh {
		r.sh[i].counts = map[Key]*Counts{}
		r.sh[i].active = map[Active]struct{}{}
	}
	return r
}

// Record counts one request: the account it is billed to, its credential,
// operation, the user acting, its status and how long it took.
func (r *Recorder) Record(account, credential, operation, userID string, status int, took time.Duration) {
	now := r.clock.Now().UTC()
	k := Key{Start: now.Truncate(time.Hour), AccountID: account, Credential: credential, Operation: operation}
	bin := Bin(took.Microseconds())
	s := r.shard(credential, operation)
	s.mu.Lock()
	c := s.counts[k]
	if c == nil {
		c = &Counts{Latency: Sketch{}}
		s.counts[k] = c
	}
	c.Requests++
	switch {
	case status >= 500:
		c.Errors5xx++
	case status >= 400:
		c.Errors4xx++
	}
	c.Latency[bin]++
	if userID != "" {
		s.active[Active{Day: now.Truncate(24 * time.Hour), UserID: userID}] = struct{}{}
	}
	s.mu.Unlock()
}

// shard is where a credential's operation is counted (without building a
// string: no allocation on the request path).
func (r *Recorder) shard(credential, operation string) *shard {
	return &r.sh[(maphash.String(r.seed, credential)^maphash.String(r.seed, operation))%shards]
}

// take empties the shards and returns what they held.
func (r *Recorder) take() (map[Key]*Counts, map[Active]struct{}) {
	counts, active := map[Key]*Counts{}, map[Active]struct{}{}
	for i := range r.sh {
		s := &r.sh[i]
		s.mu.Lock()
		c, a := s.counts, s.active
		s.counts, s.active = map[Key]*Counts{}, map[Active]struct{}{}
		s.mu.Unlock()
		for k, v := range c {
			counts[k] = v // keys never span shards
		}
		for k := range a {
			active[k] = struct{}{}
		}
	}
	return counts, active
}

// putBack returns counts that could not be flushed, to go with the next flush.
func (r *Recorder) putBack(counts map[Key]*Counts, active map[Active]struct{}) {
	for k, c := range counts {
		s := r.shard(k.Credential, k.Operation)
		s.mu.Lock()
		if have := s.counts[k]; have != nil {
			have.merge(c)
		} else {
			s.counts[k] = c
		}
		s.mu.Unlock()
	}
	for a := range active {
		s := &r.sh[0]
		s.mu.Lock()
		s.active[a] = struct{}{}
		s.mu.Unlock()
	}
}

// Flush adds everything counted since the last flush to the sink: each hour
// row, and the day rows they roll up into. If the sink fails, the counts
// stay in memory for the next flush.
func (r *Recorder) Flush(ctx context.Context) error {
	r.flush.Lock()
	defer r.flush.Unlock()
	counts, active := r.take()
	if len(counts) == 0 && len(active) == 0 {
		return nil
	}
	rows := rollup(counts)
	as := make([]Active, 0, len(active))
	for a := range active {
		as = append(as, a)
	}
	slices.SortFunc(as, func(a, b Active) int {
		return cmp.Or(a.Day.Compare(b.Day), cmp.Compare(a.UserID, b.UserID))
	})
	if err := r.sink.AddUsage(ctx, rows, as); err != nil {
		r.putBack(counts, active)
		return err
	}
	return nil
}

// rollup makes the hour rows and the day rows of counts, in one order on
// every node (rows are locked in that order, so two nodes flushing at once
// never deadlock).
func rollup(counts map[Key]*Counts) []Row {
	days := map[Key]*Counts{}
	rows := make([]Row, 0, 2*len(counts))
	for k, c := range counts {
		rows = append(rows, Row{Granularity: "h", Key: k, Counts: *c})
		dk := k
		dk.Start = k.Start.Truncate(24 * time.Hour)
		d := days[dk]
		if d == nil {
			d = &Counts{Latency: Sketch{}}
			days[dk] = d
		}
		d.merge(c)
	}
	for k, c := range days {
		rows = append(rows, Row{Granularity: "d", Key: k, Counts: *c})
	}
	slices.SortFunc(rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(a.Granularity, b.Granularity), cmp.Compare(a.AccountID, b.AccountID),
			a.Start.Compare(b.Start), cmp.Compare(a.Credential, b.Credential), cmp.Compare(a.Operation, b.Operation))
	})
	return rows
}

// Run flushes every interval until ctx ends, then once more, so that a node
// stopping leaves nothing it counted behind.
func (r *Recorder) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := r.Flush(fctx); err != nil {
				r.log.Warn("flush request analytics at shutdown", "error", err.Error())
			}
			cancel()
			return
		case <-t.C:
			if err := r.Flush(ctx); err != nil && ctx.Err() == nil {
				r.log.Warn("flush request analytics", "error", err.Error())
			}
		}
	}
}
