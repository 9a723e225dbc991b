package store_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

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
