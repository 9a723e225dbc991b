package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/messaging"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/stream"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
)

// startHub runs a hub over db until the test ends.
func startHub(t *testing.T, db *store.DB, opt stream.Options) *stream.Hub {
	t.Helper()
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h := stream.NewHub(store.NewStream(db), opt)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return h
}

// put writes one stream event for each of userIDs in a transaction of its
// own, through DB.Tx as every change does.
func put(t *testing.T, db *store.DB, kind string, at time.Time, data any, userIDs ...string) {
	t.Helper()
	if err := db.Tx(context.Background(), func(tx *sql.Tx) error {
		return store.AppendStream(context.Background(), tx, userIDs, kind, data, at)
	}); err != nil {
		t.Fatal(err)
	}
}

func open(t *testing.T, h *stream.Hub, userID string) *stream.Conn {
	t.Helper()
	c, err := h.Open(context.Background(), userID, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// receive reads n live events from c.
func receive(t *testing.T, c *stream.Conn, n int) []stream.Event {
	t.Helper()
	var out []stream.Event
	for len(out) < n {
		select {
		case ev := <-c.Live():
			out = append(out, ev)
		case <-c.Done():
			t.Fatalf("connection ended after %d of %d events: %v", len(out), n, c.Err())
		case <-time.After(10 * time.Second):
			t.Fatalf("received %d of %d events", len(out), n)
		}
	}
	return out
}

func seqs(evs []stream.Event) []int64 {
	var out []int64
	for _, ev := range evs {
		out = append(out, ev.Seq)
	}
	return out
}

// TestStreamHubFanOut: every connection of a user gets each of its events,
// in order; nobody gets another user's; a connection that does not keep up
// is dropped while the others go on.
func TestStreamHubFanOut(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		ann, bob := register(t, db, clk, "ann"), register(t, db, clk, "bob")
		h := startHub(t, db, stream.Options{Buffer: 4, Clock: clk, Poll: time.Hour}) // woken by commits alone
		annPhone, annLaptop, annStuck, bobPhone := open(t, h, ann.ID), open(t, h, ann.ID), open(t, h, ann.ID), open(t, h, bob.ID)

		for i := range 10 {
			put(t, db, "test.event", clk.Now(), map[string]int{"n": i}, ann.ID)
			if i%3 == 0 {
				put(t, db, "test.event", clk.Now(), map[string]int{"n": 100 + i}, bob.ID)
			}
			// annPhone and annLaptop keep up; annStuck never reads.
			receive(t, annPhone, 1)
			receive(t, annLaptop, 1)
		}
		select {
		case <-annStuck.Done():
			if annStuck.Err() != stream.ErrDropped {
				t.Fatalf("stuck connection ended with %v, want ErrDropped", annStuck.Err())
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a connection that read nothing of 10 events with a buffer of 4 was not dropped")
		}
		got := receive(t, bobPhone, 4)
		for _, ev := range got {
			if ev.UserID != bob.ID {
				t.Fatalf("bob received %s's event %d", ev.UserID, ev.Seq)
			}
		}
		if !slices.IsSorted(seqs(got)) {
			t.Fatalf("bob's events out of order: %v", seqs(got))
		}
		select {
		case ev := <-bobPhone.Live():
			t.Fatalf("bob received a fifth event %d (%s)", ev.Seq, ev.UserID)
		case <-time.After(200 * time.Millisecond):
		}
		if st := h.Stats(); st.Dropped != 1 || st.Connections != 3 {
			t.Fatalf("stats %+v, want 1 dropped and 3 open", st)
		}
	})
}

// TestStreamHubResume: a connection opened with the last id it saw replays
// exactly what followed, then goes on live with nothing twice; typing
// events are replayed only while fresh.
func TestStreamHubResume(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		ann, bob := register(t, db, clk, "ann"), register(t, db, clk, "bob")
		h := startHub(t, db, stream.Options{Clock: clk})
		c := open(t, h, ann.ID)
		put(t, db, "test.event", clk.Now(), 1, ann.ID)
		put(t, db, "test.event", clk.Now(), 2, ann.ID)
		seen := receive(t, c, 2)
		c.Close()

		put(t, db, stream.KindTyping, clk.Now(), "old typing", ann.ID)
		put(t, db, "test.event", clk.Now(), 3, ann.ID, bob.ID)
		clk.Advance(stream.TypingTTL + time.Second)
		put(t, db, stream.KindTyping, clk.Now(), "fresh typing", ann.ID)
		put(t, db, "test.event", clk.Now(), 4, ann.ID)
		// Wait until the hub has read them, so that they are replayed rather
		// than live.
		head, err := store.NewStream(db).Head(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for h.Stats().Horizon < head {
			time.Sleep(5 * time.Millisecond)
		}

		r, err := h.Open(ctx, ann.ID, seen[1].Seq, true)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var replayed []string
		for {
			page, err := r.Replay(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			for _, ev := range page {
				replayed = append(replayed, string(ev.Data))
			}
		}
		if want := []string{"3", `"fresh typing"`, "4"}; !slices.Equal(replayed, want) {
			t.Fatalf("replayed %v, want %v", replayed, want)
		}
		put(t, db, "test.event", clk.Now(), 5, ann.ID)
		if live := receive(t, r, 1); string(live[0].Data) != "5" {
			t.Fatalf("live after replay: %s, want 5", live[0].Data)
		}

		// An id beyond anything committed resumes from the end.
		far, err := h.Open(ctx, ann.ID, head+1_000_000, true)
		if err != nil {
			t.Fatal(err)
		}
		defer far.Close()
		put(t, db, "test.event", clk.Now(), 6, ann.ID)
		if live := receive(t, far, 1); string(live[0].Data) != "6" {
			t.Fatalf("after a resume from an unknown id: %s, want 6", live[0].Data)
		}
	})
}

// TestStreamHubLateCommit: on PostgreSQL a transaction can take a lower
// sequence number and commit after a higher one. The hub holds the later
// event back until the earlier commits, so both arrive, in order, and the
// last id a client saw always covers everything before it.
func TestStreamHubLateCommit(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		if db.Dialect != store.Postgres {
			t.Skip("SQLite has one writer at a time: a transaction cannot stay open while another commits")
		}
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		ann := register(t, db, clk, "ann")
		h := startHub(t, db, stream.Options{Clock: clk, GapGrace: time.Minute})
		c := open(t, h, ann.ID)

		inserted, release, committed := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			committed <- db.Tx(ctx, func(tx *sql.Tx) error {
				if err := store.AppendStream(ctx, tx, []string{ann.ID}, "test.event", "slow", clk.Now()); err != nil {
					return err
				}
				// Written now (not when the function returns), so that it
				// holds its sequence number uncommitted.
				if err := store.FlushPending(ctx, tx); err != nil {
					return err
				}
				close(inserted)
				<-release
				return nil
			})
		}()
		<-inserted
		put(t, db, "test.event", clk.Now(), "fast", ann.ID)
		select {
		case ev := <-c.Live():
			t.Fatalf("event %d (%s) went out while a lower sequence number was uncommitted", ev.Seq, ev.Data)
		case <-time.After(300 * time.Millisecond):
		}
		close(release)
		if err := <-committed; err != nil {
			t.Fatal(err)
		}
		got := receive(t, c, 2)
		if string(got[0].Data) != `"slow"` || string(got[1].Data) != `"fast"` || got[0].Seq >= got[1].Seq {
			t.Fatalf("got %s (%d), %s (%d); want slow then fast", got[0].Data, got[0].Seq, got[1].Data, got[1].Seq)
		}

		// A rolled-back transaction leaves a gap for good: after the grace
		// the events behind it go out.
		h2 := startHub(t, db, stream.Options{Clock: clk, GapGrace: 300 * time.Millisecond})
		c2 := open(t, h2, ann.ID)
		if err := db.Tx(ctx, func(tx *sql.Tx) error {
			if err := store.AppendStream(ctx, tx, []string{ann.ID}, "test.event", "rolled back", clk.Now()); err != nil {
				return err
			}
			if err := store.FlushPending(ctx, tx); err != nil {
				return err
			}
			return fmt.Errorf("change of mind")
		}); err == nil {
			t.Fatal("the transaction did not fail")
		}
		put(t, db, "test.event", clk.Now(), "after the gap", ann.ID)
		if got := receive(t, c2, 1); string(got[0].Data) != `"after the gap"` {
			t.Fatalf("got %s", got[0].Data)
		}
		if h2.Stats().GapsSkipped != 1 {
			t.Fatalf("stats %+v, want one gap skipped", h2.Stats())
		}
	})
}

// TestStreamHubWokenByOtherNodes: a hub learns of rows another node (here,
// another connection pool) commits from LISTEN/NOTIFY, not from its poll,
// which this test sets to an hour.
func TestStreamHubWokenByOtherNodes(t *testing.T) {
	testdb.Each(t, func(t *testing.T, url string, db *store.DB) {
		if db.Dialect != store.Postgres {
			t.Skip("SQLite serves one node")
		}
		clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		ann := register(t, db, clk, "ann")
		other := testdb.Open(t, url) // the other node's pool
		h := startHub(t, other, stream.Options{Clock: clk, Poll: time.Hour})
		c := open(t, h, ann.ID)
		for i := range 5 {
			put(t, db, "test.event", clk.Now(), i, ann.ID)
			if got := receive(t, c, 1); string(got[0].Data) != fmt.Sprint(i) {
				t.Fatalf("got %s, want %d", got[0].Data, i)
			}
		}
	})
}

// TestStreamAfterReadsTheWantedRows: the reader's read carries the data of
// the rows whose recipients it asks for, and of the others their number
// and recipient alone, in one sequence.
func TestStreamAfterReadsTheWantedRows(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		ann, bob := register(t, db, clk, "ann"), register(t, db, clk, "bob")
		st := store.NewStream(db)
		head, err := st.Head(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			put(t, db, "test.event", clk.Now(), i, ann.ID, bob.ID)
		}
		var want []int64
		for _, wanted := range []map[string]bool{{ann.ID: true}, {}, {ann.ID: true, bob.ID: true}} {
			rows, err := st.After(context.Background(), head, 100, func(u string) bool { return wanted[u] })
			if err != nil {
				t.Fatal(err)
			}
			if want == nil {
				want = seqs(rows)
			}
			if len(rows) != 6 || !slices.IsSorted(seqs(rows)) || !slices.Equal(seqs(rows), want) {
				t.Fatalf("wanting %v: read %v, want 6 in order (%v)", wanted, seqs(rows), want)
			}
			for _, ev := range rows {
				whole := ev.Kind == "test.event" && len(ev.Data) > 0 && !ev.Skipped
				skipped := ev.Skipped && ev.Kind == "" && ev.Data == nil
				if wanted[ev.UserID] && !whole || !wanted[ev.UserID] && !skipped {
					t.Fatalf("wanting %v: row %d of %s read as %+v", wanted, ev.Seq, ev.UserID, ev)
				}
			}
		}
	})
}

// connectingStream opens a connection for userID in the hub's first read
// that finds a row of theirs, after the read and before it returns: a
// client connecting between the reader's read and its delivery.
type connectingStream struct {
	*store.Stream
	hub    *stream.Hub
	userID string
	opened chan *stream.Conn
	once   sync.Once
}

func (s *connectingStream) After(ctx context.Context, after int64, limit int, want func(string) bool) ([]stream.Event, error) {
	rows, err := s.Stream.After(ctx, after, limit, want)
	for _, ev := range rows {
		if ev.UserID == s.userID {
			s.once.Do(func() {
				c, err := s.hub.Open(ctx, s.userID, 0, false)
				if err != nil {
					panic(err)
				}
				s.opened <- c
			})
		}
	}
	return rows, err
}

// TestStreamHubConnectedDuringARead: a row read without its data (nobody
// was connected for it) still reaches a connection its recipient opened
// before the row was handed out.
func TestStreamHubConnectedDuringARead(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		ann := register(t, db, clk, "ann")
		st := &connectingStream{Stream: store.NewStream(db), userID: ann.ID, opened: make(chan *stream.Conn, 1)}
		h := stream.NewHub(st, stream.Options{Clock: clk, Poll: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		st.hub = h
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); h.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		// A connection of someone else, so that the hub is serving.
		open(t, h, register(t, db, clk, "bob").ID)

		put(t, db, "test.event", clk.Now(), "first", ann.ID)
		var c *stream.Conn
		select {
		case c = <-st.opened:
			t.Cleanup(c.Close)
		case <-time.After(10 * time.Second):
			t.Fatal("the hub did not read the row")
		}
		if got := receive(t, c, 1); string(got[0].Data) != `"first"` {
			t.Fatalf("got %s, want the first row", got[0].Data)
		}
		select {
		case ev := <-c.Live():
			t.Fatalf("a second event %d (%s) after the one row", ev.Seq, ev.Data)
		case <-time.After(200 * time.Millisecond):
		}
	})
}

// TestStreamRetention: the janitor deletes stream events older than the
// retention and keeps the rest for replay.
func TestStreamRetention(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		ann := register(t, db, clk, "ann")
		put(t, db, "test.event", clk.Now(), "old", ann.ID)
		clk.Advance(5 * 24 * time.Hour)
		put(t, db, "test.event", clk.Now(), "recent", ann.ID)
		clk.Advance(3 * 24 * time.Hour) // the first is 8 days old, the second 3
		n, err := db.PurgeExpired(ctx, clk.Now(), store.DefaultRetention)
		if err != nil {
			t.Fatal(err)
		}
		if n["stream_events"] != 1 {
			t.Fatalf("purged %v, want one stream event", n)
		}
		left, err := store.NewStream(db).Replay(ctx, ann.ID, 0, 1<<62, time.Time{}, 10)
		if err != nil || len(left) != 1 || string(left[0].Data) != `"recent"` {
			t.Fatalf("left %v, %v; want the recent event", left, err)
		}
		keep := store.DefaultRetention
		keep.Stream = 2 * 24 * time.Hour
		if n, err = db.PurgeExpired(ctx, clk.Now(), keep); err != nil || n["stream_events"] != 1 {
			t.Fatalf("with a 2-day retention purged %v, %v; want the other one", n, err)
		}
	})
}

// TestSendStreamsTheNotificationFirst: a recipient's stream has a new
// message's notification before the message itself, so that a client that
// clears a conversation's badge when its new message arrives is not shown
// the badge again by the notification that follows.
func TestSendStreamsTheNotificationFirst(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		clk, ann, bob, conv := twoInConversation(t, db)
		svc := messaging.NewService(store.NewMessaging(db), clk)
		for _, body := range []string{"first", "second"} {
			if _, err := svc.Send(ctx, conv.ID, ann.ID, body, ""); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := db.QueryContext(ctx, `SELECT kind FROM stream_events WHERE user_id = $1 ORDER BY seq`, bob.ID)
		if err != nil {
			t.Fatal(err)
		}
		kinds, err := store.ScanStrings(rows)
		if err != nil {
			t.Fatal(err)
		}
		if len(kinds) != 4 || kinds[1] != messaging.StreamSent || kinds[3] != messaging.StreamSent || kinds[0] == messaging.StreamSent || kinds[2] == messaging.StreamSent {
			t.Fatalf("bob's stream: %v; want a notification, then the message, twice", kinds)
		}
	})
}
