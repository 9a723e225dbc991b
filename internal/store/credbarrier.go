package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// credentialsChannel carries the ids of accounts whose credentials changed
// (migration 00080).
const credentialsChannel = "matchpoint_credentials"

// credBarrier is how a PostgreSQL node knows it has heard of every change
// to credentials committed before a request: a connection of its own,
// outside the pool, that LISTENs on credentialsChannel, and a round trip on
// it before a key is answered from memory. PostgreSQL delivers to a session
// the notifications of the transactions that committed before its query
// finished, ahead of the query's answer (and a change's notice is queued
// before its COMMIT returns), so once the round trip is back every such
// change has dropped its keys from the cache.
//
// Like keyBatch, requests that arrive while a round trip is under way wait
// for the next one, which serves them all: under load a request costs a
// fraction of a trivial query.
type credBarrier struct {
	url   string
	cache *credCache

	mu       sync.Mutex
	running  bool
	queue    []chan error
	failedAt time.Time // the last failure to connect or to round-trip
	closed   bool

	connMu   sync.Mutex // held by the one round trip, or by close
	conn     *pgconn.HijackedConn
	draining bool // the drain goroutine runs (under connMu)
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
	if err := b.exchange(); err != nil {
		b.cache.setLive(false)
		_ = b.conn.Conn.Close()
		b.conn = nil
		return fmt.Errorf("store: credentials listener: %w", err)
	}
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
// empty: anything it held may have changed unheard. While nobody asks for a
// round trip, one a second reads what accumulates on the connection.
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
	if !b.draining {
		b.draining = true
		go b.drain()
	}
	return nil
}

// drain makes a round trip every second until the barrier is closed, so
// that notifications do not pile up unread on an idle node.
func (b *credBarrier) drain() {
	t := time.NewTicker(time.Second)
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
	b.cache.setLive(false)
	if b.conn != nil {
		_ = b.conn.Conn.Close()
		b.conn = nil
	}
}
