package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
)

// TestTxPanicRollsBack: a panic inside a transaction must not leave it open.
// On SQLite an open write transaction would block every later writer.
func TestTxPanicRollsBack(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		func() {
			defer func() { _ = recover() }()
			_ = db.Tx(ctx, func(tx *sql.Tx) error {
				if _, err := tx.ExecContext(ctx, `INSERT INTO instance_keys (name, value, created_at) VALUES ('p', 'v', 1)`); err != nil {
					t.Fatal(err)
				}
				panic("boom")
			})
		}()
		wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		err := db.Tx(wctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(wctx, `INSERT INTO instance_keys (name, value, created_at) VALUES ('q', 'v', 1)`)
			return err
		})
		if err != nil {
			t.Fatalf("a later transaction failed: %v", err)
		}
		var n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM instance_keys WHERE name = 'p'`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("the panicking transaction's row is there (%d, %v)", n, err)
		}
	})
}

// TestTxOutcomesStayApart: transactions that run at once (on SQLite, in
// one batch) each get their own outcome. Those that fail, panic or whose
// caller gave up leave nothing; the others all commit.
func TestTxOutcomesStayApart(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		const n = 120
		var wg sync.WaitGroup
		errs := make([]error, n)
		panics := make([]any, n)
		gone, cancelGone := context.WithCancel(ctx)
		cancelGone()
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { panics[i] = recover() }()
				c := ctx
				if i%7 == 3 {
					c = gone
				}
				errs[i] = db.Tx(c, func(tx *sql.Tx) error {
					if _, err := tx.ExecContext(c, `INSERT INTO instance_keys (name, value, created_at) VALUES ($1, 'v', 1)`, fmt.Sprint("k", i)); err != nil {
						return err
					}
					switch i % 7 {
					case 1:
						return errors.New("refused")
					case 2:
						panic(fmt.Sprint("boom ", i))
					case 5: // a statement that fails, after the row
						_, err := tx.ExecContext(c, `INSERT INTO instance_keys (name, value, created_at) VALUES ($1, 'v', 1)`, fmt.Sprint("k", i))
						return err
					}
					return nil
				})
			}()
		}
		wg.Wait()
		for i := range n {
			var rows int
			if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM instance_keys WHERE name = $1`, fmt.Sprint("k", i)).Scan(&rows); err != nil {
				t.Fatal(err)
			}
			switch i % 7 {
			case 1, 3, 5:
				if errs[i] == nil || rows != 0 {
					t.Errorf("transaction %d: error %v, %d rows; want an error and none", i, errs[i], rows)
				}
			case 2:
				if panics[i] != fmt.Sprint("boom ", i) || rows != 0 {
					t.Errorf("transaction %d: panic %v, %d rows; want its own panic and none", i, panics[i], rows)
				}
			default:
				if errs[i] != nil || panics[i] != nil || rows != 1 {
					t.Errorf("transaction %d: error %v, panic %v, %d rows; want its row", i, errs[i], panics[i], rows)
				}
			}
		}
	})
}

// TestTxHeldRowsFollowTheirTransaction: the rows a transaction holds until
// its work ends (outbox events, stream rows, notifications) are written once each for
// those that commit and never for the others, when transactions run at
// once (on SQLite, in one batch), including those that write what is held
// part-way (a redaction does) and then fail: the rows of the batch's
// earlier transactions that such a write took with it are held again.
func TestTxHeldRowsFollowTheirTransaction(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		ann := register(t, db, clk, "ann")
		const n = 140
		var wg sync.WaitGroup
		errs := make([]error, n)
		evs := make([]outbox.Event, n)
		for i := range n {
			evs[i] = newEvent(t, clk.Now(), ann.ID)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { _ = recover() }()
				errs[i] = db.Tx(ctx, func(tx *sql.Tx) error {
					if err := store.AppendEvent(ctx, tx, &evs[i]); err != nil {
						return err
					}
					if err := store.AppendStream(ctx, tx, []string{ann.ID}, "test.held", fmt.Sprint("k", i), clk.Now()); err != nil {
						return err
					}
					store.HoldNotifications(tx, notify.New(clk.Now(), ann.ID, notify.KindMatchRequested, fmt.Sprint("k", i), "", nil))
					if i%7 == 4 || i%7 == 6 { // written part-way
						if err := store.FlushPending(ctx, tx); err != nil {
							return err
						}
					}
					switch i % 7 {
					case 1, 4:
						return errors.New("refused")
					case 2:
						panic(fmt.Sprint("boom ", i))
					}
					return nil
				})
			}()
		}
		wg.Wait()
		for i := range n {
			var events, rows int
			if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM outbox_events WHERE id = $1`, evs[i].ID).Scan(&events); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM stream_events WHERE kind = 'test.held' AND data = $1`, fmt.Sprintf(`"k%d"`, i)).Scan(&rows); err != nil {
				t.Fatal(err)
			}
			var notes int
			if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM notifications WHERE user_id = $1 AND title = $2`, ann.ID, fmt.Sprint("k", i)).Scan(&notes); err != nil {
				t.Fatal(err)
			}
			want := 1
			if i%7 == 1 || i%7 == 2 || i%7 == 4 {
				want = 0
			}
			if events != want || rows != want || notes != want {
				t.Errorf("transaction %d (error %v): %d events, %d stream rows, %d notifications; want %d of each", i, errs[i], events, rows, notes, want)
			}
		}
	})
}

// TestTxCommitOutlivesTheCaller: the commit does not depend on the caller's
// context. A caller gone after its last statement has its work committed
// and hears nil: were the commit bound to the context, an end of it during
// the commit's round trip could leave the work done on the server while
// the caller heard it failed.
func TestTxCommitOutlivesTheCaller(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		err := db.Tx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO instance_keys (name, value, created_at) VALUES ('late', 'v', 1)`); err != nil {
				return err
			}
			cancel()
			return nil
		})
		var n int
		if err := db.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM instance_keys WHERE name = 'late'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if err != nil || n != 1 {
			t.Fatalf("a transaction whose caller ended after its last statement: error %v, %d rows; want nil and its row", err, n)
		}
		// A caller gone before it began is refused, as before.
		if err := db.Tx(ctx, func(tx *sql.Tx) error { return nil }); !errors.Is(err, context.Canceled) {
			t.Fatalf("a transaction whose caller had ended: %v, want context.Canceled", err)
		}
	})
}
