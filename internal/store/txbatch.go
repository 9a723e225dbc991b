package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// On SQLite the write transactions of a process commit together: a
// transaction that arrives while another runs waits, and then runs with
// every other one that waited, in one SQLite transaction, each inside a
// savepoint of its own. One commit writes their pages to the log once (a
// page that several of them changed, such as the end of an index, once),
// and the rows they hold for the end of the work (pending.go: outbox
// events, stream rows, new messages' notifications and full-text terms)
// go in one statement per kind for all of them. Each caller still gets its own outcome: an error or a panic in one
// rolls back its savepoint alone, and nobody hears of success before the
// commit. Only the waiting is shared: with a single writer at a time,
// nothing runs later than it would have.
//
// A transaction's statements are not interrupted when its caller's
// context ends (stmtConn): SQLite rolls back the whole transaction when
// it interrupts a write, which would undo the others' work too. A context
// that has ended makes the next statement fail, and the savepoint rolls
// back.

// maxBatch bounds the transactions run together; a batch takes no more
// after running for batchTime.
const (
	maxBatch  = 64
	batchTime = 2 * time.Millisecond
)

type txBatcher struct {
	db      *DB
	mu      sync.Mutex
	queue   []*txJob
	running bool // a goroutine is running batches
}

// Job states: waiting in the queue, taken into a batch, or given up by its
// caller (its context ended, or it waited gateWait) before it was taken.
const (
	jobQueued int32 = iota
	jobTaken
	jobAbandoned
)

type txJob struct {
	fn    func(*sql.Tx) error
	state atomic.Int32
	done  chan txOutcome // buffered: the batch never blocks on a caller
}

type txOutcome struct {
	err      error
	panicked bool
	value    any // what fn panicked with
}

// run runs fn as a transaction of the next batch and returns its outcome.
func (b *txBatcher) run(ctx context.Context, fn func(*sql.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	j := &txJob{fn: fn, done: make(chan txOutcome, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, j)
	lead := !b.running
	b.running = true
	b.mu.Unlock()
	if lead {
		b.lead()
	}
	var out txOutcome
	select {
	case out = <-j.done:
	default:
		t := time.NewTimer(gateWait)
		select {
		case out = <-j.done:
		case <-ctx.Done():
			out = b.giveUp(j, ctx.Err())
		case <-t.C:
			out = b.giveUp(j, ErrBusy)
		}
		t.Stop()
	}
	if out.panicked {
		panic(out.value)
	}
	return out.err
}

// giveUp leaves the queue with err unless the job is already in a batch,
// whose outcome it then waits for.
func (b *txBatcher) giveUp(j *txJob, err error) txOutcome {
	if j.state.CompareAndSwap(jobQueued, jobAbandoned) {
		return txOutcome{err: fmt.Errorf("store: wait to write: %w", err)}
	}
	return <-j.done
}

// lead runs one batch of the queue; if more wait, a new goroutine runs the
// next batch, so that this caller returns now.
func (b *txBatcher) lead() {
	b.runBatch()
	b.mu.Lock()
	more := len(b.queue) > 0
	b.running = more
	b.mu.Unlock()
	if more {
		go b.lead()
	}
}

// next takes the first job of the queue that its caller has not given up,
// or nil.
func (b *txBatcher) next() *txJob {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.queue) > 0 {
		j := b.queue[0]
		b.queue[0] = nil
		b.queue = b.queue[1:]
		if j.state.CompareAndSwap(jobQueued, jobTaken) {
			return j
		}
	}
	return nil
}

// runBatch runs jobs of the queue in one transaction and tells each its
// outcome. It takes the next job while the batch is young (batchTime) and
// not full: a job waits for those before it in its batch to commit, so
// the batch is kept short.
func (b *txBatcher) runBatch() {
	db := b.db
	first := b.next()
	if first == nil {
		return
	}
	jobs := []*txJob{first}
	outs := make([]txOutcome, 1, 8)
	defer func() {
		for i, j := range jobs {
			j.done <- outs[i]
		}
	}()
	ctx := context.Background()
	err := batchTx(ctx, db, func(tx *sql.Tx) error {
		start := time.Now()
		for i := 0; i < len(jobs); i++ {
			if _, err := tx.ExecContext(ctx, `SAVEPOINT batched`); err != nil {
				return fmt.Errorf("store: savepoint: %w", err)
			}
			// Rows held for the end of the batch (pending.go) that this
			// job adds are its own, dropped if it rolls back.
			beginJob(tx)
			outs[i] = runJob(jobs[i], tx)
			if outs[i].err != nil || outs[i].panicked {
				rollbackJob(tx)
				if _, err := tx.ExecContext(ctx, `ROLLBACK TO batched`); err != nil {
					// The transaction is gone (SQLite ends it on some
					// errors): so is the work of the jobs before this one.
					return fmt.Errorf("store: the transaction ended: %w", errors.Join(outs[i].err, err))
				}
			}
			if _, err := tx.ExecContext(ctx, `RELEASE batched`); err != nil {
				return fmt.Errorf("store: release savepoint: %w", err)
			}
			if len(jobs) < maxBatch && time.Since(start) < batchTime {
				if j := b.next(); j != nil {
					jobs, outs = append(jobs, j), append(outs, txOutcome{})
				}
			}
		}
		return nil
	})
	if err != nil { // nothing committed: every job that did not fail on its own gets err
		for i := range outs {
			if outs[i].err == nil && !outs[i].panicked {
				outs[i] = txOutcome{err: err}
			}
		}
	}
}

// batchTx is db.inTx for a batch, with a panic outside the jobs (in
// writing the rows they hold, pending.go, or in the commit) turned into
// the batch's error: inTx has rolled back by then, and every job that did
// not fail on its own must hear so, not the success it was about to be
// told.
func batchTx(ctx context.Context, db *DB, body func(tx *sql.Tx) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("store: the batch failed: %v", r)
		}
	}()
	return db.inTx(ctx, body)
}

// runJob runs a job's function, turning a panic into its outcome.
func runJob(j *txJob, tx *sql.Tx) (out txOutcome) {
	defer func() {
		if r := recover(); r != nil {
			out = txOutcome{panicked: true, value: r}
		}
	}()
	return txOutcome{err: j.fn(tx)}
}
