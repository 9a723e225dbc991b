package store

import (
	"context"
	"sync"
	"time"
)

// SQLite copies its write-ahead log back into the database file in a
// checkpoint. By default the connection whose commit takes the log past
// 1,000 pages does it, there and then: that is the writer, which every
// write of the process waits for, and it spent an eighth of its time
// copying pages and syncing the file. Here a goroutine of the process runs
// PASSIVE checkpoints instead, on a connection of the pool, a little after
// writes: PASSIVE takes no lock that a reader or the writer waits for, so
// the copying runs beside them on another core. The writer checkpoints
// only past walBound pages (wal_autocheckpoint in Open), which the
// goroutine normally keeps the log under: with no bound at all, a log
// left long after heavy writing made searches a third slower. As with the
// automatic checkpoint, the log is reused from its start once a checkpoint
// has copied all of it and no reader still uses it. The last connection to
// close (this process's, another `matchpoint` command's) checkpoints too.

// walBound is the log's length, in pages, past which the writer
// checkpoints itself (40 MB of 4 KB pages).
const walBound = 10000

// checkpointEvery is the least time between two checkpoints: each copies
// the pages written since the one before, a page written many times in
// between once.
const checkpointEvery = 100 * time.Millisecond

type checkpointer struct {
	wake chan struct{} // a write ended (buffered: one wake-up pending is enough)
	stop chan struct{}
	once sync.Once // Close may be called twice
	done sync.WaitGroup
}

// startCheckpoints starts the checkpointing goroutine of a SQLite database.
func (db *DB) startCheckpoints() {
	c := &checkpointer{wake: make(chan struct{}, 1), stop: make(chan struct{})}
	db.ckpt = c
	c.done.Add(1)
	go func() {
		defer c.done.Done()
		t := time.NewTimer(0)
		defer t.Stop()
		for {
			select {
			case <-c.wake:
			case <-c.stop:
				return
			}
			// A checkpoint that could not copy the whole log (a reader
			// still used an older state of it) is tried again after the
			// pause, writes or not: until it is whole, readers take the
			// pages it holds from the log, by a system call each, instead
			// of from the mapped file (a search over a million messages
			// that nothing wrote after cost a third more). An error (the
			// database closing, a disk full) is tried again the same way.
			var busy, logged, copied int
			err := db.DB.QueryRowContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &logged, &copied)
			if err != nil || busy != 0 || copied < logged {
				db.wroteLog()
			}
			t.Reset(checkpointEvery)
			select {
			case <-t.C:
			case <-c.stop:
				return
			}
		}
	}()
}

// wroteLog tells the checkpointer that a write ended.
func (db *DB) wroteLog() {
	if db.ckpt == nil {
		return
	}
	select {
	case db.ckpt.wake <- struct{}{}:
	default:
	}
}

// stopCheckpoints ends the goroutine (before the database closes).
func (db *DB) stopCheckpoints() {
	if db.ckpt == nil {
		return
	}
	db.ckpt.once.Do(func() { close(db.ckpt.stop) })
	db.ckpt.done.Wait()
}
