package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// credentialsChannel carries the ids of accounts whose credentials changed
// (migration 00080).
const credentialsChannel = "matchpoint_credentials"

// credBarrier is how a PostgreSQL node knows it has heard of the changes to
// credentials: a connection of its own, outside the pool, that LISTENs on
// credentialsChannel, and round trips on it. PostgreSQL delivers to a session
// the notifications of the transactions that committed before its query
// finished, ahead of the query's answer (a change's notice is queued before
// its COMMIT returns), so once a round trip is back, every change committed
// before it started has dropped its keys from the cache.
//
// A round trip runs every credHeartbeat. A key is answered from memory only
// if the last round trip to come back started at most credFresh ago;
// otherwise the request makes one itself (requests that arrive together
// share it, like keyBatch). And the service, after it commits a change to
// credentials on PostgreSQL, waits credSettle before it answers (DB.Tx,
// RevokeKey): by then every node that still answers from memory has made a
// round trip that started after the commit. So a client that saw the change
// made, through any node, finds it applied on every node; a change typed by
// hand in psql reaches every node within credFresh.
type credBarrier struct {
	url   string
	cache *credCache
	base  time.Time    // the origin of lastStart, on the monotonic clock
	last  atomic.Int64 // when the last round trip to come back started, ns since base

	mu       sync.Mutex
	running  bool
	queue    []chan error
	failedAt time.Time // the last failure to connect or to round-trip
	closed   bool

	connMu    sync.Mutex // held by the one round trip, or by close
	conn      *pgconn.HijackedConn
	heartbeat bool // the heartbeat goroutine runs (under connMu)
}

const (
	// credHeartbeat is how often a node makes a round trip on its own.
	credHeartbeat = 20 * time.Millisecond
	// credFresh is how old the start of the last round trip may be for a
	// key to be answered from memory without one.
	credFresh = 50 * time.Millisecond
	// credSettle is how long the service waits after committing a change
	// to credentials before answering: past credFresh, with room for the
	// clocks of two machines to run at slightly different rates.
	credSettle = credFresh + 10*time.Millisecond
)

func newCredBarrier(url string, cache *credCache) *credBarrier {
	b := &credBarrier{url: url, cache: cache, base: time.Now()}
	b.last.Store(-int64(time.Hour))
	return b
}

// fresh reports whether the last round trip started recently enough for
// a key to be answered from memory without another.
func (b *credBarrier) fresh() bool {
	return time.Since(b.base)-time.Duration(b.last.Load()) <= credFresh
}

// errNoBarrier answers while the connection is down: the caller reads the
// key from the database, as it would with no cache.
var errNoBarrier = errors.New("store: the credentials listener is down")

// credRetryAfter is how long a node reads keys from the database after its
// listening connection failed, before it tries to connect again.
const credRetryAfter = time.Second

// pass returns nil once a round trip that started after it was called has
// come back, or an error (and then the cache is off).
func (b *credBarrier) pass(ctx context.Context) error {
	ch := make(chan error, 1)
	b.mu.Lock()
	if b.closed || (!b.failedAt.IsZero() && time.Since(b.failedAt) < credRetryAfter) {
		b.mu.Unlock()
		return errNoBarrier
	}
	b.queue = append(b.queue, ch)
	lead := !b.running
	b.running = true
	b.mu.Unlock()
	if lead {
		b.run()
	}
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run makes one round trip for everyone queued so far; those who queued
// meanwhile are served by a goroutine of their own, so the request that
// started it does not wait for them.
func (b *credBarrier) run() {
	b.mu.Lock()
	batch := b.queue
	b.queue = nil
	b.mu.Unlock()

	err := b.roundTrip()
	for _, ch := range batch {
		ch <- err
	}

	b.mu.Lock()
	if err != nil {
		b.failedAt = time.Now()
	}
	if len(b.queue) > 0 {
		b.mu.Unlock()
		go b.run()
		return
	}
	b.running = false
	b.mu.Unlock()
}

// credRoundTripTimeout bounds a round trip (and a connection), which runs
// on no one request's context.
const credRoundTripTimeout = 5 * time.Second

func (b *credBarrier) roundTrip() error {
	b.connMu.Lock()
	defer b.connMu.Unlock()
	if b.conn == nil {
		ctx, cancel := context.WithTimeout(context.Background(), credRoundTripTimeout)
		defer cancel()
		if err := b.connect(ctx); err != nil {
			return err
		}
	}
	start := time.Since(b.base)
	if err := b.exchange(); err != nil {
		b.last.Store(-int64(time.Hour))
		b.cache.setLive(false)
		_ = b.conn.Conn.Close()
		b.conn = nil
		return fmt.Errorf("store: credentials listener: %w", err)
	}
	b.last.Store(int64(start))
	return nil
}

// exchange sends an empty query, the cheapest statement there is, and reads
// up to its ReadyForQuery, handing the notifications that come first to the
// cache. It speaks the protocol itself on the hijacked connection: pgconn's
// general path costs more per round trip than the query does.
func (b *credBarrier) exchange() error {
	c := b.conn
	if err := c.Conn.SetDeadline(time.Now().Add(credRoundTripTimeout)); err != nil {
		return err
	}
	c.Frontend.Send(&pgproto3.Query{String: ";"})
	if err := c.Frontend.Flush(); err != nil {
		return err
	}
	var failed error
	for {
		msg, err := c.Frontend.Receive()
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *pgproto3.NotificationResponse:
			if m.Channel == credentialsChannel {
				b.cache.invalidatePayload(m.Payload)
			}
		case *pgproto3.ErrorResponse:
			failed = fmt.Errorf("%s: %s", m.Code, m.Message)
		case *pgproto3.ReadyForQuery:
			return failed
		}
	}
}

// connect opens the listening connection; the cache is in use from here on,
// empty: anything it held may have changed unheard.
func (b *credBarrier) connect(ctx context.Context) error {
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return errNoBarrier
	}
	cfg, err := pgconn.ParseConfig(b.url)
	if err != nil {
		return fmt.Errorf("store: credentials listener: %w", err)
	}
	pc, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("store: credentials listener: %w", err)
	}
	if _, err := pc.Exec(ctx, "LISTEN "+credentialsChannel).ReadAll(); err != nil {
		_ = pc.Close(ctx)
		return fmt.Errorf("store: credentials listener: %w", err)
	}
	if err := pc.SyncConn(ctx); err != nil {
		_ = pc.Close(ctx)
		return fmt.Errorf("store: credentials listener: %w", err)
	}
	hc, err := pc.Hijack()
	if err != nil {
		_ = pc.Close(ctx)
		return fmt.Errorf("store: credentials listener: %w", err)
	}
	b.conn = hc
	b.cache.setLive(true)
	if !b.heartbeat {
		b.heartbeat = true
		go b.beat()
	}
	return nil
}

// beat makes a round trip every credHeartbeat until the barrier is closed,
// so that requests find the last one fresh and need none of their own.
func (b *credBarrier) beat() {
	t := time.NewTicker(credHeartbeat)
	defer t.Stop()
	for range t.C {
		b.mu.Lock()
		closed := b.closed
		b.mu.Unlock()
		if closed {
			return
		}
		_ = b.pass(context.Background())
	}
}

// close ends the listening connection for good.
func (b *credBarrier) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.connMu.Lock()
	defer b.connMu.Unlock()
	b.last.Store(-int64(time.Hour))
	b.cache.setLive(false)
	if b.conn != nil {
		_ = b.conn.Conn.Close()
		b.conn = nil
	}
}

// settle waits, after a change to credentials committed, until every node
// that answers keys from memory has heard of it (see credBarrier). It does
// nothing on SQLite, where every process sees the change before the commit
// returns.
func (db *DB) settle() {
	if db.creds.barrier != nil {
		time.Sleep(credSettle)
	}
}
