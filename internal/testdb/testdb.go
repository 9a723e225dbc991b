// Package testdb gives tests a fresh, migrated database on each engine:
// SQLite always, PostgreSQL when MATCHPOINT_TEST_POSTGRES_URL is set. Each
// PostgreSQL database is a schema of its own, so tests run in parallel.
package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/store"
)

// EnvPostgres names the variable holding the PostgreSQL server for tests.
const EnvPostgres = "MATCHPOINT_TEST_POSTGRES_URL"

// Engines lists the engines tests run on here.
func Engines() []store.Dialect {
	out := []store.Dialect{store.SQLite}
	if os.Getenv(EnvPostgres) != "" {
		out = append(out, store.Postgres)
	}
	return out
}

// Each runs fn as a subtest per engine, each with its own fresh database;
// the engines run in parallel.
func Each(t *testing.T, fn func(t *testing.T, url string, db *store.DB)) {
	t.Helper()
	for _, d := range Engines() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			u := NewURL(t, d)
			fn(t, u, Open(t, u))
		})
	}
}

// Open connects to url, migrates, and closes at the end of the test.
func Open(t testing.TB, u string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db
}

// NewURL returns the URL of a new, empty database on engine d.
func NewURL(t testing.TB, d store.Dialect) string {
	t.Helper()
	if d == store.SQLite {
		return "sqlite:" + filepath.Join(t.TempDir(), "test.db")
	}
	base := os.Getenv(EnvPostgres)
	if base == "" {
		t.Skip(EnvPostgres + " is not set")
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec(`CREATE SCHEMA ` + schema); err != nil {
		t.Fatalf("create test schema: %v", err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer admin.Close()
		_, _ = admin.Exec(`DROP SCHEMA ` + schema + ` CASCADE`)
	})
	pu, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := pu.Query()
	q.Set("search_path", schema)
	pu.RawQuery = q.Encode()
	return pu.String()
}
