package store

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"sync"
	"sync/atomic"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// credWatch tells the credentials cache (credcache.go) about changes to
// credentials. On SQLite it sees every row change through a pre-update hook
// on each connection; on PostgreSQL, it hears the notifications of the
// triggers of migration 00080 through barrier.
type credWatch struct {
	cache   *credCache
	barrier *credBarrier // PostgreSQL
	// writes counts this process's changes to credentials rows (SQLite):
	// a write that saw it move bumps the shared counter again once it has
	// committed, see DB.afterWrite.
	writes atomic.Uint64
	// touchColumn is the position of api_keys.last_used_at (SQLite), or -1
	// while unknown: an update that changes nothing else is not a change
	// to the credential.
	touchColumn atomic.Int32
}

func newCredWatch() *credWatch {
	w := &credWatch{cache: newCredCache()}
	w.touchColumn.Store(-1)
	return w
}

// sqliteConnector opens SQLite connections that carry the hook.
type sqliteConnector struct {
	driver.Connector
	w *credWatch
}

func (c sqliteConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	h, ok := conn.(sqlite.HookRegisterer)
	if !ok {
		// A connection that cannot report changes: keep nothing in memory.
		c.w.cache.setLive(false)
		return keepStatements(conn), nil
	}
	h.RegisterPreUpdateHook(c.w.preUpdate)
	return keepStatements(conn), nil
}

// preUpdate runs inside SQLite before each row change, on the connection
// making it: it must not query, only count.
func (w *credWatch) preUpdate(d sqlite.SQLitePreUpdateData) {
	switch d.TableName {
	case "users":
		// A new account has no key in any memory yet.
		if d.Op == sqlite3.SQLITE_INSERT {
			return
		}
	case "user_sports":
	case "api_keys":
		if d.Op == sqlite3.SQLITE_INSERT || (d.Op == sqlite3.SQLITE_UPDATE && w.onlyTouched(&d)) {
			return
		}
	default:
		return
	}
	w.writes.Add(1)
	if e := w.cache.epoch; e != nil {
		e.bump()
	}
}

// onlyTouched reports whether an api_keys update changes last_used_at alone.
func (w *credWatch) onlyTouched(d *sqlite.SQLitePreUpdateData) bool {
	col := int(w.touchColumn.Load())
	n := d.Count()
	if col < 0 || col >= n {
		return false
	}
	before, after := make([]any, n), make([]any, n)
	if d.Old(before...) != nil || d.New(after...) != nil {
		return false
	}
	for i := range before {
		if i == col {
			continue
		}
		a, aBytes := before[i].([]byte)
		b, bBytes := after[i].([]byte)
		if aBytes || bBytes {
			if !aBytes || !bBytes || !bytes.Equal(a, b) {
				return false
			}
		} else if before[i] != after[i] {
			return false
		}
	}
	return true
}

// writeMark is what afterWrite compares with.
func (db *DB) writeMark() uint64 { return db.creds.writes.Load() }

// afterWrite ends a write (a statement or a transaction, committed or not):
// if credentials rows changed in this process meanwhile, the shared counter
// moves again, now that the change is visible, so that no entry filled from
// the old row while the change was committing is used after it.
func (db *DB) afterWrite(mark uint64) {
	if db.creds.writes.Load() != mark {
		if e := db.creds.cache.epoch; e != nil {
			e.bump()
		}
	}
}

// credTxs holds, until DB.Tx ends them, the transactions that change
// credentials through the service: after the commit, DB.Tx waits for every
// node to have heard of it (DB.settle) before the caller answers.
var credTxs sync.Map // *sql.Tx -> struct{}

// noteCredentials records that tx changes credentials.
func noteCredentials(tx *sql.Tx) { credTxs.Store(tx, struct{}{}) }

// findTouchColumn learns where api_keys.last_used_at is (SQLite), once the
// table exists.
func (db *DB) findTouchColumn(ctx context.Context) {
	if db.Dialect != SQLite || db.creds.touchColumn.Load() >= 0 {
		return
	}
	var cid int32
	if err := db.DB.QueryRowContext(ctx, `SELECT cid FROM pragma_table_info('api_keys') WHERE name = 'last_used_at'`).Scan(&cid); err == nil {
		db.creds.touchColumn.Store(cid)
	}
}
