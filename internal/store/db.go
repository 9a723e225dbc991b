// Package store is the database/sql code of every domain: one code path over
// two engines, embedded SQLite (the default) and PostgreSQL (for several
// nodes). Queries use $N placeholders, which both drivers accept; what truly
// differs lives in Dialect.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	"modernc.org/sqlite"
)

// Dialect names the database engine.
type Dialect string

const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// DB is the service's database handle.
type DB struct {
	*sql.DB
	Dialect Dialect
	cache   stmtCache
	creds   *credWatch
	gate    chan struct{} // SQLite: one writer of this process at a time (writegate.go)
	batch   *txBatcher    // SQLite: write transactions commit together (txbatch.go)
	ckpt    *checkpointer // SQLite: copies the log into the file beside the writer (checkpoint.go)
}

// Open connects to a database URL: "sqlite:PATH" or "postgres://...".
func Open(ctx context.Context, rawURL string) (*DB, error) {
	var db *DB
	switch {
	case strings.HasPrefix(rawURL, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(rawURL, "sqlite:"), "//")
		if path == "" {
			return nil, errors.New("store: sqlite URL needs a path, like sqlite:./data/matchpoint.db")
		}
		if strings.Contains(path, ":memory:") || strings.Contains(path, "mode=memory") {
			// Each pooled connection would get its own empty database.
			return nil, errors.New("store: in-memory SQLite is not supported; use a file path (a temporary directory works)")
		}
		if dir := filepath.Dir(path); dir != "." {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, fmt.Errorf("store: create %s: %w", dir, err)
			}
		}
		// WAL lets readers run beside the one writer; IMMEDIATE transactions take
		// the write lock up front, so two writers queue on busy_timeout instead
		// of failing when one tries to upgrade a read lock.
		// A 32 MiB page cache per connection (the default is 2 MiB) keeps
		// the indexes that searches walk in memory instead of re-reading
		// their pages from the file on every query.
		// Temporary data in memory: above all the journals of savepoints
		// (each write of a batch runs in one, txbatch.go) and of statements
		// that write several rows, which otherwise spill to a temporary file
		// created and written anew in every transaction (a seventh of a
		// message send's time in the writer).
		// The file mapped into memory (up to SQLite's limit, 2 GiB): pages
		// the page cache does not hold are read from the operating system's
		// cache without a system call and a copy each; a one-word search
		// over a million messages, which reads a few hundred of them, went
		// from 6.4 to 4.5 ms of CPU.
		// Checkpoints beside the writer, not in it (checkpoint.go).
		dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
			"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)" +
			"&_pragma=synchronous(NORMAL)&_pragma=cache_size(-32768)&_pragma=temp_store(MEMORY)" +
			"&_pragma=mmap_size(2147418112)&_pragma=wal_autocheckpoint(" + strconv.Itoa(walBound) + ")&_txlock=immediate"
		base, err := sqlite.NewConnector(dsn)
		if err != nil {
			return nil, fmt.Errorf("store: open sqlite: %w", err)
		}
		creds := newCredWatch()
		// The counter of changes to credentials that every process on this
		// database shares (credcache.go); without it nothing is cached.
		if creds.cache.epoch, err = openEpoch(path + "-epoch"); err == nil {
			creds.cache.setLive(true)
		}
		sdb := sql.OpenDB(sqliteConnector{Connector: base, w: creds})
		sdb.SetMaxOpenConns(4)
		sdb.SetMaxIdleConns(4)
		sdb.SetConnMaxIdleTime(0)
		db = &DB{DB: sdb, Dialect: SQLite, creds: creds, gate: make(chan struct{}, 1)}
		db.batch = &txBatcher{db: db}
	case strings.HasPrefix(rawURL, "postgres://"), strings.HasPrefix(rawURL, "postgresql://"):
		pdb, err := sql.Open("pgx", rawURL)
		if err != nil {
			return nil, fmt.Errorf("store: open postgres: %w", err)
		}
		pdb.SetMaxOpenConns(20)
		pdb.SetMaxIdleConns(20)
		pdb.SetConnMaxIdleTime(5 * time.Minute)
		creds := newCredWatch()
		creds.barrier = newCredBarrier(rawURL, creds.cache)
		db = &DB{DB: pdb, Dialect: Postgres, creds: creds}
	default:
		return nil, fmt.Errorf("store: unsupported database URL %q: want sqlite:PATH or postgres://", redact(rawURL))
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: connect to %s: %w", redact(rawURL), err)
	}
	db.findTouchColumn(pctx)
	if db.Dialect == SQLite {
		db.startCheckpoints()
	}
	return db, nil
}

// redact hides a password in a database URL before it reaches a log or error.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// Tx runs fn in a transaction and commits if fn returns nil. The deferred
// rollback also ends the transaction when fn panics, so a bug in one request
// cannot leave a connection holding locks (SQLite's single write lock, above
// all); after Commit it does nothing. On SQLite fn runs in the next batch
// of this process's writes (txbatch.go).
func (db *DB) Tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if db.batch != nil {
		return db.batch.run(ctx, fn)
	}
	return db.inTx(ctx, fn)
}

// inTx runs body in one database transaction, in this process's turn to
// write (writegate.go), and commits if body returns nil: Tx's transaction,
// or a batch of them.
func (db *DB) inTx(ctx context.Context, body func(tx *sql.Tx) error) error {
	defer db.afterWrite(db.writeMark()) // after the commit or rollback below
	leave, err := db.enterWrite(ctx)
	if err != nil {
		return err
	}
	defer leave() // after the commit or rollback too
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	// The transaction itself is not bound to ctx, only its statements
	// are (body's and the held rows'): database/sql and the PostgreSQL
	// driver commit with the context given here, and a commit that ctx
	// interrupts on its way may still be done on the server while the
	// caller hears it failed (a worker stopping then left the jobs it had
	// just claimed leased, unknown to it, until the lease ran out). A
	// caller gone mid-body has its next statement fail and the
	// transaction roll back; one gone after the last statement has its
	// work committed, and is told so.
	tx, err := db.BeginTx(context.WithoutCancel(ctx), nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	pendingTxs.Store(tx, &txPending{postgres: db.Dialect == Postgres})
	defer pendingTxs.Delete(tx)
	defer credTxs.Delete(tx)
	if err := body(tx); err != nil {
		return err
	}
	streamed, err := db.pendingBeforeCommit(ctx, tx)
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	if streamed {
		db.streamCommitted()
	}
	if _, changed := credTxs.Load(tx); changed {
		db.settle()
	}
	return nil
}

// forUpdate is the row-lock suffix of a SELECT that a transaction will write
// back. SQLite needs none: its IMMEDIATE transactions already hold the lock.
func (db *DB) forUpdate() string {
	if db.Dialect == Postgres {
		return " FOR UPDATE"
	}
	return ""
}

// micros and fromMicros convert between time.Time and the stored integer.
func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func nullMicros(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMicro(), Valid: true}
}

func fromNullMicros(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromMicros(n.Int64)
	return &t
}

// scanStrings reads a one-column result of strings and closes rows.
func scanStrings(rows *sql.Rows) ([]string, error) { return scanColumn[string](rows) }

// scanColumn reads a one-column result and closes rows.
func scanColumn[T any](rows *sql.Rows) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
