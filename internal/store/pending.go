package store

import (
	"context"
	"database/sql"
	"slices"
	"sync"

	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
)

// Some rows a transaction adds wait in the process until its work ends,
// and then go in one statement per kind for all of it: outbox events,
// stream rows, the notifications of new messages and (SQLite) the
// full-text terms of new messages. On SQLite the work of a transaction is
// a batch of them (txbatch.go): a batch of eight message sends writes its
// thirty-odd stream rows in one insert, not eight; and the full-text index
// takes the batch's messages at once, into one new segment, instead of
// writing a segment for each message (SQLite asks the index to write out
// what it holds before each savepoint and each statement after it, and
// every job of a batch runs in a savepoint).
//
// Nothing is lost or seen early: the rows are written before the commit,
// inside the transaction. A job of a batch that rolls back drops its rows
// (and, if something it did wrote the held rows of the jobs before it,
// holds those again: the rollback undid their writing). A statement that
// reads or changes those tables in the same transaction (a redaction, an
// erasure, an edit of a message whose terms wait) calls flushPending
// first.

// pendingTxs holds, until DB.Tx ends them, the transactions with rows
// waiting.
var pendingTxs sync.Map // *sql.Tx -> *txPending

// txPending is what a transaction holds, in the order flushPending writes
// it: notifications first (they add stream rows and events of their own).
type txPending struct {
	postgres    bool // the engine, for the statements that differ
	notes       held[*notify.Notification]
	events      held[*outbox.Event]
	terms       held[heldTerms]
	stream      held[streamEntry]
	wroteStream bool // some stream rows were written: wake the hub after the commit
}

// heldTerms is a new message for SQLite's full-text index.
type heldTerms struct {
	seq                  int64
	conversationID, body string
}

// held is a list of rows waiting, with what a batch's running job needs to
// undo its part.
type held[T any] struct {
	items   []T
	mark    int  // len(items) when the running job began
	written bool // a flush during the job wrote the items before mark
	before  []T  // those items, held again if the job rolls back
}

func (h *held[T]) add(xs ...T) { h.items = append(h.items, xs...) }

// take returns the items to write now.
func (h *held[T]) take() []T {
	if h.mark > 0 && !h.written {
		h.before, h.written = slices.Clone(h.items[:h.mark]), true
	}
	out := h.items
	h.items, h.mark = nil, 0
	return out
}

func (h *held[T]) begin() { h.mark, h.written, h.before = len(h.items), false, nil }

func (h *held[T]) rollback() {
	if h.written {
		h.items = h.before
	} else {
		clear(h.items[h.mark:])
		h.items = h.items[:h.mark]
	}
	h.begin()
}

// pendingOf returns what tx holds (DB.inTx registers each transaction;
// one begun elsewhere gets an entry here, with the statements both engines
// take).
func pendingOf(tx *sql.Tx) *txPending {
	if p, ok := pendingTxs.Load(tx); ok {
		return p.(*txPending)
	}
	p, _ := pendingTxs.LoadOrStore(tx, &txPending{})
	return p.(*txPending)
}

// heldList is what beginJob and rollbackJob do to each kind of held row.
type heldList interface {
	begin()
	rollback()
}

func (p *txPending) lists() [4]heldList {
	return [4]heldList{&p.notes, &p.events, &p.terms, &p.stream}
}

// beginJob marks where the next job of a batch starts.
func beginJob(tx *sql.Tx) {
	if p, ok := pendingTxs.Load(tx); ok {
		for _, h := range p.(*txPending).lists() {
			h.begin()
		}
	}
}

// rollbackJob drops what the job of a batch added: it rolled back to its
// savepoint.
func rollbackJob(tx *sql.Tx) {
	if p, ok := pendingTxs.Load(tx); ok {
		for _, h := range p.(*txPending).lists() {
			h.rollback()
		}
	}
}

// flushPending writes every row tx holds.
func flushPending(ctx context.Context, tx *sql.Tx) error {
	p, ok := pendingTxs.Load(tx)
	if !ok {
		return nil
	}
	pending := p.(*txPending)
	// The stream rows of the notifications come first, as when each change
	// wrote its notifications before its own rows (a client that clears a
	// conversation's badge on its new message sees the message last).
	changes := len(pending.stream.items)
	if ns := pending.notes.take(); len(ns) > 0 {
		if err := addNotifications(ctx, tx, ns); err != nil {
			return err
		}
	}
	if evs := pending.events.take(); len(evs) > 0 {
		if err := insertEvents(ctx, tx, evs); err != nil {
			return err
		}
	}
	if ts := pending.terms.take(); len(ts) > 0 {
		if err := insertTerms(ctx, tx, ts); err != nil {
			return err
		}
	}
	if es := pending.stream.take(); len(es) > 0 {
		for _, part := range [2][]streamEntry{es[changes:], es[:changes]} {
			for len(part) > 0 {
				n := min(len(part), 1000) // well within either engine's limit of parameters
				if err := insertStream(ctx, tx, part[:n]); err != nil {
					return err
				}
				part = part[n:]
			}
		}
		pending.wroteStream = true
	}
	return nil
}
