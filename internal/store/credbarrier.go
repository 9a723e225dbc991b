package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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

	connMu sync.Mutex // held by the one round trip, or by close
	conn   *pgx.Conn
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

// credRoundTripTimeout bounds a round trip, which runs on no one request's
// context.
const credRoundTripTimeout = 5 * time.Second

func (b *credBarrier) roundTrip() error {
	b.connMu.Lock()
	defer b.connMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), credRoundTripTimeout)
	defer cancel()
	if b.conn == nil {
		if err := b.connect(ctx); err != nil {
			return err
		}
	}
	// The notifications that arrive with the answer go to OnNotification.
	if _, err := b.conn.PgConn().Exec(ctx, ";").ReadAll(); err != nil {
		b.cache.setLive(false)
		_ = b.conn.Close(ctx)
		b.conn = nil
		return fmt.Errorf("store: credentials listener: %w", err)
	}
	return nil
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
	cfg, err := pgx.ParseConfig(b.url)
	if err != nil {
		return fmt.Errorf("store: credentials listener: %w", err)
	}
	cfg.OnNotification = func(_ *pgconn.PgConn, n *pgconn.Notification) {
		if n.Channel == credentialsChannel {
			b.cache.invalidatePayload(n.Payload)
		}
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("store: credentials listener: %w", err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+credentialsChannel); err != nil {
		_ = conn.Close(ctx)
		return fmt.Errorf("store: credentials listener: %w", err)
	}
	b.conn = conn
	b.cache.setLive(true)
	return nil
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
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = b.conn.Close(ctx)
		b.conn = nil
	}
}
