package store

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps one prepared statement per query text. database/sql
// otherwise prepares (so SQLite parses) every statement on every call; the
// queries are fixed strings in this package, so the cache stays small.
type stmtCache struct {
	mu    sync.RWMutex
	stmts map[string]*sql.Stmt
}

func (db *DB) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	db.cache.mu.RLock()
	st := db.cache.stmts[query]
	db.cache.mu.RUnlock()
	if st != nil {
		return st, nil
	}
	db.cache.mu.Lock()
	defer db.cache.mu.Unlock()
	if st = db.cache.stmts[query]; st != nil {
		return st, nil
	}
	st, err := db.DB.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if db.cache.stmts == nil {
		db.cache.stmts = map[string]*sql.Stmt{}
	}
	db.cache.stmts[query] = st
	return st, nil
}

// QueryRowContext runs a one-row query through the statement cache.
func (db *DB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	defer db.afterWrite(db.writeMark()) // an INSERT ... RETURNING writes too
	st, err := db.prepared(ctx, query)
	if err != nil {
		return db.DB.QueryRowContext(ctx, query, args...) // reports the same error through the row
	}
	return st.QueryRowContext(ctx, args...)
}

// QueryContext runs a query through the statement cache.
func (db *DB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	defer db.afterWrite(db.writeMark())
	st, err := db.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// ExecContext runs a statement through the statement cache, as a write
// (writegate.go).
func (db *DB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	defer db.afterWrite(db.writeMark())
	leave, err := db.enterWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	st, err := db.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// Close closes the cached statements and the database.
func (db *DB) Close() error {
	db.stopCheckpoints()
	db.cache.mu.Lock()
	for _, st := range db.cache.stmts {
		st.Close()
	}
	db.cache.stmts = nil
	db.cache.mu.Unlock()
	if b := db.creds.barrier; b != nil {
		b.close()
	}
	return db.DB.Close()
}
