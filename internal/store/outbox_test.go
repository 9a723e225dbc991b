package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
)

func newEvent(t *testing.T, now time.Time, user string) outbox.Event {
	t.Helper()
	ev, err := outbox.New(now, outbox.UserUpdated, user, "user", map[string]string{"id": user})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// record appends ev in a transaction of its own.
func record(t *testing.T, db *store.DB, ev outbox.Event) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.AppendEvent(ctx, tx, &ev); err != nil {
		t.Fatal(err)
	}
	if err := store.FlushPending(ctx, tx); err != nil { // as DB.Tx does before its commit
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func ids(cs []store.Claimed) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Event.ID)
	}
	return out
}

func TestOutboxQueue(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		ob := store.NewOutbox(db)
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		const c = outbox.ConsumerWebhooks
		a, b := newEvent(t, now, "usr_a"), newEvent(t, now, "usr_b")
		a.Audience = append(a.Audience, "usr_x")
		record(t, db, a)
		record(t, db, b)

		t.Run("claim leases in order with the audience", func(t *testing.T) {
			got, err := ob.Claim(ctx, c, "node1", now, time.Minute, 10)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), []string{a.ID, b.ID}) {
				t.Fatalf("claimed %v", ids(got))
			}
			if !slices.Equal(got[0].Event.Audience, []string{"usr_a", "usr_x"}) || string(got[0].Event.Payload) != string(a.Payload) {
				t.Errorf("event read back as %+v", got[0].Event)
			}
		})
		t.Run("a leased row is not claimed again before it expires", func(t *testing.T) {
			got, err := ob.Claim(ctx, c, "node2", now.Add(59*time.Second), time.Minute, 10)
			if err != nil || len(got) != 0 {
				t.Fatalf("claimed %v, %v", ids(got), err)
			}
		})
		t.Run("an expired lease is taken over and the old owner loses it", func(t *testing.T) {
			got, err := ob.Claim(ctx, c, "node2", now.Add(61*time.Second), time.Minute, 1)
			if err != nil || !slices.Equal(ids(got), []string{a.ID}) {
				t.Fatalf("claimed %v, %v", ids(got), err)
			}
			if err := ob.Done(ctx, c, "node1", got[0].Seq); err != store.ErrLeaseLost {
				t.Fatalf("done by the old owner: %v, want ErrLeaseLost", err)
			}
			if err := ob.Done(ctx, c, "node2", got[0].Seq); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("release hands a lease back at once", func(t *testing.T) {
			if err := ob.Release(ctx, c, "node1"); err != nil {
				t.Fatal(err)
			}
			got, err := ob.Claim(ctx, c, "node3", now.Add(62*time.Second), time.Minute, 10)
			if err != nil || !slices.Equal(ids(got), []string{b.ID}) {
				t.Fatalf("claimed %v, %v", ids(got), err)
			}
			if err := ob.Done(ctx, c, "node3", got[0].Seq); err != nil {
				t.Fatal(err)
			}
			if n, _ := ob.Pending(ctx, c); n != 0 {
				t.Fatalf("%d still pending", n)
			}
		})
		t.Run("the janitor keeps pending events and purges old finished ones", func(t *testing.T) {
			old := newEvent(t, now, "usr_c")
			record(t, db, old)
			later := now.Add(store.DefaultRetention.Outbox + time.Hour)
			n, err := db.PurgeExpired(ctx, later, store.DefaultRetention)
			if err != nil || n["outbox_events"] != 2 {
				t.Fatalf("purged %v, %v; want the two finished events", n, err)
			}
			evs, _ := ob.Recorded(ctx, 0, 10)
			if len(evs) != 1 || evs[0].ID != old.ID {
				t.Fatalf("left %v, want the pending one", evs)
			}
		})
	})
}

// TestOutboxLateCommit is the case a "seq > last" reader gets wrong: a
// transaction takes its sequence number, a later one commits first, and the
// consumer reads in between. Both events must still be consumed.
func TestOutboxLateCommit(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		if db.Dialect != store.Postgres {
			t.Skip("SQLite has one writer at a time: a transaction cannot stay open while another commits")
		}
		ctx := context.Background()
		ob := store.NewOutbox(db)
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		first, second := newEvent(t, now, "usr_first"), newEvent(t, now, "usr_second")

		slow, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer slow.Rollback()
		if err := store.AppendEvent(ctx, slow, &first); err != nil {
			t.Fatal(err)
		}
		if err := store.FlushPending(ctx, slow); err != nil { // takes the lower seq
			t.Fatal(err)
		}
		record(t, db, second) // takes a higher seq and commits first

		got, err := ob.Claim(ctx, outbox.ConsumerWebhooks, "n", now, time.Minute, 10)
		if err != nil || !slices.Equal(ids(got), []string{second.ID}) {
			t.Fatalf("claimed %v, %v; want the committed event", ids(got), err)
		}
		secondSeq := got[0].Seq
		if err := ob.Done(ctx, outbox.ConsumerWebhooks, "n", secondSeq); err != nil {
			t.Fatal(err)
		}
		if err := slow.Commit(); err != nil {
			t.Fatal(err)
		}
		got, err = ob.Claim(ctx, outbox.ConsumerWebhooks, "n", now, time.Minute, 10)
		if err != nil || !slices.Equal(ids(got), []string{first.ID}) {
			t.Fatalf("claimed %v, %v; want the event that committed late", ids(got), err)
		}
		if got[0].Seq >= secondSeq {
			t.Fatal("the late event did not take the lower sequence number; the test proves nothing")
		}
	})
}
