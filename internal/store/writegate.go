package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrBusy is a write that waited gateWait for its turn.
var ErrBusy = errors.New("the database is busy")

// SQLite has one writer at a time. Writers that find the lock taken wait
// in SQLite's busy handler, which sleeps 1, 2, 5, 10 ... 100 ms between
// tries whatever the other writer's progress: under a few concurrent
// writes a transaction of a millisecond waited tens of milliseconds, and
// the lock stood free meanwhile. The writers of this process queue on
// writeGate instead, first come first served, and take the lock the moment
// it is released. Writers of other processes on the same file (`matchpoint
// admin`, a second `serve`) still meet in the busy handler.

// gateWait is how long a writer waits for its turn: the busy timeout that
// SQLite would have applied.
const gateWait = 10 * time.Second

// enterWrite waits for this process's turn to write (SQLite; a no-op on
// PostgreSQL, whose row locks let writers run side by side). The returned
// function ends the turn.
func (db *DB) enterWrite(ctx context.Context) (func(), error) {
	if db.gate == nil {
		return func() {}, nil
	}
	select {
	case db.gate <- struct{}{}:
		return db.leaveWrite, nil
	default:
	}
	t := time.NewTimer(gateWait)
	defer t.Stop()
	select {
	case db.gate <- struct{}{}:
		return db.leaveWrite, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("store: wait to write: %w", ctx.Err())
	case <-t.C:
		return nil, fmt.Errorf("store: wait to write: %w", ErrBusy)
	}
}

func (db *DB) leaveWrite() {
	<-db.gate
	db.wroteLog()
}
