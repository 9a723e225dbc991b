package store_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
)

// TestCheckpointsBesideTheWriter: on SQLite the writer copies the log into
// the database file only past 10,000 pages (wal_autocheckpoint), and the
// process's own checkpoints do it soon after writes well below that: the
// file grows by the 2 MiB written without anyone asking for a checkpoint.
// Closing twice is safe.
func TestCheckpointsBesideTheWriter(t *testing.T) {
	u := testdb.NewURL(t, store.SQLite)
	db := testdb.Open(t, u)
	ctx := context.Background()
	var auto int
	if err := db.DB.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil {
		t.Fatal(err)
	}
	if auto != 10000 {
		t.Fatalf("wal_autocheckpoint = %d, want 10000", auto)
	}
	path := strings.TrimPrefix(strings.TrimPrefix(u, "sqlite:"), "//")
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE ballast (b BLOB)`); err != nil {
		t.Fatal(err)
	}
	before := size()
	for range 8 {
		if _, err := db.ExecContext(ctx, `INSERT INTO ballast (b) VALUES (zeroblob(262144))`); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for size() < before+2<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("the database file is %d bytes (%d before 2 MiB were written): no checkpoint copied them", size(), before)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
}
