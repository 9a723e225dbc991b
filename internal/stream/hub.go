package stream

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clock"
)

// Store is what the hub reads: the stream_events table, and the signals that
// rows were committed.
type Store interface {
	// Head is the highest sequence number committed so far (0 when none).
	Head(ctx context.Context) (int64, error)
	// After returns up to limit rows of every recipient with seq > after,
	// in sequence order: whole for the recipients want accepts, the others
	// Skipped (their number and recipient alone; so is a wanted row deleted
	// between the store's two reads).
	After(ctx context.Context, after int64, limit int, want func(userID string) bool) ([]Event, error)
	// Replay returns up to limit rows of userID with after < seq <= upTo, in
	// sequence order, leaving out typing events created before typingSince.
	Replay(ctx context.Context, userID string, after, upTo int64, typingSince time.Time, limit int) ([]Event, error)
	// Commits signals (coalesced) each commit of stream rows by this process.
	Commits() <-chan struct{}
	// Listen calls wake each time any node commits stream rows, until ctx
	// ends or the channel fails (an error: the hub listens again). Engines
	// with a single node return nil at once: Commits tells them everything.
	Listen(ctx context.Context, wake func()) error
}

// Options tune a Hub; zero values take the defaults.
type Options struct {
	// Buffer is how many events may wait for one connection; a connection
	// that falls further behind is dropped (its client reconnects with
	// Last-Event-ID and catches up from the table), so that one slow client
	// never holds up the others. Default 256.
	Buffer int
	// Poll is how often the reader looks at the table without being woken:
	// a safety net for a notification lost while the listener reconnects.
	// Default 1 s.
	Poll time.Duration
	// GapGrace is how long the reader waits for a missing sequence number
	// before it counts it as rolled back (see deliver). Default 3 s.
	GapGrace time.Duration
	// Clock dates typing events for replay; default the real clock.
	Clock  clock.Clock
	Logger *slog.Logger
}

// Errors of a connection.
var (
	// ErrDropped ends a connection that fell more than Buffer events behind.
	ErrDropped = errors.New("stream: the connection fell behind and was dropped")
	// ErrClosed ends a connection when its hub stops (the node shuts down).
	ErrClosed = errors.New("stream: the service is stopping")
	// ErrNotRunning is returned by Open before the hub has read the table's
	// head, or after it stopped.
	ErrNotRunning = errors.New("stream: the hub is not running")
)

// readBatch is how many rows one read of the table takes at most.
const readBatch = 1000

// replayPage is how many rows one replay read takes at most.
const replayPage = 500

// Hub fans the stream out to the connections on this node. One goroutine
// (Run) reads new rows; connections never read the table for live events,
// so a thousand connected clients cost two queries per commit (the new
// rows' numbers and recipients, then the rows of those connected here),
// not a thousand.
type Hub struct {
	st   Store
	opt  Options
	wake chan struct{}

	ready   chan struct{} // closed once the head is known
	stopped chan struct{} // closed when Run returns
	runCtx  context.Context
	listens sync.Once // the listener starts with the first connection

	mu      sync.Mutex
	horizon int64 // every row with seq <= horizon has been handed out (or given up, see deliver)
	conns   map[string]map[*Conn]struct{}
	closed  bool
	// The row the reader is holding back behind a gap, and since when.
	blockedSeq   int64
	blockedSince time.Time

	connections atomic.Int64
	delivered   atomic.Uint64
	dropped     atomic.Uint64
	gapsSkipped atomic.Uint64
}

// NewHub returns a hub over st; Run starts it.
func NewHub(st Store, opt Options) *Hub {
	if opt.Buffer <= 0 {
		opt.Buffer = 256
	}
	if opt.Poll <= 0 {
		opt.Poll = time.Second
	}
	if opt.GapGrace <= 0 {
		opt.GapGrace = 3 * time.Second
	}
	if opt.Clock == nil {
		opt.Clock = clock.Real{}
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	return &Hub{st: st, opt: opt, wake: make(chan struct{}, 1), ready: make(chan struct{}), stopped: make(chan struct{}),
		conns: map[string]map[*Conn]struct{}{}}
}

// Stats are the hub's counters, for metrics and benchmarks.
type Stats struct {
	Connections int64  // open now
	Delivered   uint64 // events handed to live connections (replays not counted)
	Dropped     uint64 // connections dropped for falling behind
	GapsSkipped uint64 // missing sequence numbers given up as rolled back
	Horizon     int64  // the last sequence number handed out
}

// Stats returns the counters so far.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	horizon := h.horizon
	h.mu.Unlock()
	return Stats{Connections: h.connections.Load(), Delivered: h.delivered.Load(), Dropped: h.dropped.Load(),
		GapsSkipped: h.gapsSkipped.Load(), Horizon: horizon}
}

// Wake asks the reader to look at the table now.
func (h *Hub) Wake() {
	select {
	case h.wake <- struct{}{}:
	default: // a read is due already: it will see these rows too
	}
}

// Run reads and fans out until ctx ends, then ends every connection.
func (h *Hub) Run(ctx context.Context) {
	defer close(h.stopped)
	defer h.closeAll()
	for {
		// A node starts from the head: its clients resume from the table
		// with their Last-Event-ID. (A row below the head whose transaction
		// was still committing at this instant is not sent live by this
		// node; it is in the table for any replay that covers it.)
		head, err := h.st.Head(ctx)
		if err == nil {
			h.mu.Lock()
			h.horizon = head
			h.mu.Unlock()
			break
		}
		h.opt.Logger.Warn("stream: read the head of the stream", "error", err.Error())
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
	h.runCtx = ctx
	close(h.ready)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-h.st.Commits():
				h.Wake()
			}
		}
	}()
	poll := time.NewTicker(h.opt.Poll)
	defer poll.Stop()
	for {
		var gap <-chan time.Time
		if wait := h.read(ctx); wait > 0 {
			gap = time.After(wait)
		}
		select {
		case <-ctx.Done():
			return
		case <-h.wake:
		case <-poll.C:
		case <-gap:
		}
	}
}

// listen keeps the cross-node channel open, listening again after a failure.
func (h *Hub) listen(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		start := time.Now()
		err := h.st.Listen(ctx, h.Wake)
		if err == nil || ctx.Err() != nil {
			return
		}
		h.opt.Logger.Warn("stream: listen for commits of other nodes; listening again", "error", err.Error())
		// Rows committed while nobody listened are found by this read (and
		// by the poll meanwhile).
		h.Wake()
		if time.Since(start) > time.Minute {
			backoff = 100 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

// read hands out every new row it can; it returns how long to wait before
// giving up on a gap it is holding rows back for, or 0.
func (h *Hub) read(ctx context.Context) time.Duration {
	for {
		h.mu.Lock()
		after := h.horizon
		h.mu.Unlock()
		rows, err := h.st.After(ctx, after, readBatch, h.connected)
		if err != nil {
			if ctx.Err() == nil {
				h.opt.Logger.Warn("stream: read new events", "error", err.Error())
			}
			return 0
		}
		wait, again := h.deliver(rows)
		if again {
			continue
		}
		if wait > 0 || len(rows) < readBatch {
			return wait
		}
	}
}

// connected says whether userID has a connection on this node: the reader
// reads the data of those users' rows only.
func (h *Hub) connected(userID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns[userID]) > 0
}

// deliver hands rows (read after the horizon, in order) to their
// recipients' connections and moves the horizon past them.
//
// Sequence numbers are taken when a row is inserted but become visible when
// its transaction commits, and PostgreSQL transactions commit in any order:
// the reader may see 103 while 102 is still to commit. Moving the horizon to
// 103 would skip 102 for good, and a client whose Last-Event-ID is 103
// would never get it on replay either. So the reader holds rows back behind
// a missing number and reads again when woken (the commit of 102 notifies).
// A number can also be missing for good: its transaction rolled back (or
// its node died). Such a transaction took its number before 103's was
// taken, so once 103 has been visible for GapGrace without the gap filling,
// the gap is given up and the rows behind it go out. Everything handed out
// is therefore in sequence order, and every row at or below the horizon is
// committed or abandoned, which is what makes replay up to the horizon
// exact. (A transaction that commits its stream rows more than GapGrace
// after a later one did would be missed by live connections; it is still in
// the table, and replayed to any client whose Last-Event-ID is older.)
// SQLite has one writer at a time and gives numbers in commit order, so
// there it only sees gaps where rows were deleted.
//
// A row read without its data (Skipped: nobody was connected for it, or
// it was deleted between the store's two reads) whose recipient is
// connected now stops the delivery there, again true, before any gap
// before it is counted: the connection expects every row past the horizon
// it opened at, so the reader reads again from that row (whole this time,
// or gone).
func (h *Hub) deliver(rows []Event) (wait time.Duration, again bool) {
	now := time.Now() // wall time on purpose: this measures transactions, not business time
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ev := range rows {
		if ev.Seq <= h.horizon {
			continue
		}
		if ev.Skipped && len(h.conns[ev.UserID]) > 0 {
			return 0, true
		}
		if ev.Seq > h.horizon+1 {
			if h.blockedSeq != ev.Seq {
				h.blockedSeq, h.blockedSince = ev.Seq, now
			}
			if left := h.opt.GapGrace - now.Sub(h.blockedSince); left > 0 {
				return left, false
			}
			skipped := ev.Seq - h.horizon - 1
			h.gapsSkipped.Add(uint64(skipped))
			h.opt.Logger.Info("stream: gave up missing sequence numbers as rolled back",
				"from", h.horizon+1, "to", ev.Seq-1, "waited_ms", now.Sub(h.blockedSince).Milliseconds())
		}
		h.fanoutLocked(ev)
		h.horizon = ev.Seq
	}
	return 0, false
}

// fanoutLocked gives ev to each of its recipient's connections without ever
// waiting: a connection whose buffer is full is dropped.
func (h *Hub) fanoutLocked(ev Event) {
	// deliver hands over a Skipped row only when nobody here is connected
	// for it; the check keeps an empty row from ever reaching a client.
	if ev.Hidden || ev.Skipped {
		return
	}
	// A typing event a lagging reader reaches after TypingTTL is as stale
	// live as in a replay, which leaves it out too.
	if ev.Kind == KindTyping && ev.At.Before(h.opt.Clock.Now().Add(-TypingTTL)) {
		return
	}
	for c := range h.conns[ev.UserID] {
		if ev.Seq <= c.after {
			continue // already replayed to it (it resumed from a later id)
		}
		select {
		case c.live <- ev:
			h.delivered.Add(1)
		default:
			h.dropLocked(c, ErrDropped)
			h.dropped.Add(1)
		}
	}
}

func (h *Hub) dropLocked(c *Conn, why error) {
	if c.err != nil {
		return
	}
	c.err = why
	close(c.done)
	if set := h.conns[c.userID]; set != nil {
		delete(set, c)
		if len(set) == 0 {
			delete(h.conns, c.userID)
		}
	}
	h.connections.Add(-1)
}

func (h *Hub) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, set := range h.conns {
		for c := range set {
			h.dropLocked(c, ErrClosed)
		}
	}
}

// Open connects a client of userID. With resume, the client last saw the
// event with sequence number last: the connection first replays what
// followed it from the table, then goes on live, with nothing missed and
// nothing twice. Without resume it starts with what happens next.
func (h *Hub) Open(ctx context.Context, userID string, last int64, resume bool) (*Conn, error) {
	select {
	case <-h.ready:
	case <-h.stopped:
		return nil, ErrNotRunning
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(10 * time.Second):
		return nil, ErrNotRunning
	}
	if resume {
		h.mu.Lock()
		ahead := last > h.horizon
		h.mu.Unlock()
		if ahead {
			// An id past everything committed was not given by any node:
			// resume from the end rather than wait for it.
			head, err := h.st.Head(ctx)
			if err != nil {
				return nil, err
			}
			last = min(last, head)
		}
	}
	c := &Conn{hub: h, userID: userID, live: make(chan Event, h.opt.Buffer), done: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrNotRunning
	}
	// Registered under the lock that fanout holds: every row up to the
	// horizon went out before this connection existed (the replay reads
	// them), every row after it comes through live.
	c.after = h.horizon
	if resume {
		if last < h.horizon {
			c.replayFrom, c.replayTo = last, h.horizon
		} else {
			// The client saw further than this node has read (it was on a
			// node ahead of this one): skip what it has.
			c.after = last
		}
	}
	// The cross-node listener holds a database connection of its own, so
	// it starts when there is someone to deliver to; until then the poll
	// keeps the horizon current.
	h.listens.Do(func() { go h.listen(h.runCtx) })
	set := h.conns[userID]
	if set == nil {
		set = map[*Conn]struct{}{}
		h.conns[userID] = set
	}
	set[c] = struct{}{}
	h.connections.Add(1)
	return c, nil
}

// Conn is one client's connection to its stream.
type Conn struct {
	hub    *Hub
	userID string
	after  int64 // live events at or below it are not sent (set under hub.mu)
	live   chan Event
	done   chan struct{}
	err    error // why done was closed (under hub.mu)

	replayFrom, replayTo int64 // replay what lies in (replayFrom, replayTo]
}

// Replay returns the next page of missed events, oldest first; an empty page
// means the replay is over and Live takes over.
func (c *Conn) Replay(ctx context.Context) ([]Event, error) {
	if c.replayFrom >= c.replayTo {
		return nil, nil
	}
	since := c.hub.opt.Clock.Now().Add(-TypingTTL)
	rows, err := c.hub.st.Replay(ctx, c.userID, c.replayFrom, c.replayTo, since, replayPage)
	if err != nil {
		return nil, err
	}
	if len(rows) < replayPage {
		c.replayFrom = c.replayTo
	} else {
		c.replayFrom = rows[len(rows)-1].Seq
	}
	return rows, nil
}

// Live delivers the events that follow the replay, in order.
func (c *Conn) Live() <-chan Event { return c.live }

// Done is closed when the connection was dropped or the hub stopped; Err
// says which.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why Done was closed.
func (c *Conn) Err() error {
	c.hub.mu.Lock()
	defer c.hub.mu.Unlock()
	return c.err
}

// Close disconnects the connection from the hub.
func (c *Conn) Close() {
	c.hub.mu.Lock()
	defer c.hub.mu.Unlock()
	c.hub.dropLocked(c, ErrClosed)
}
