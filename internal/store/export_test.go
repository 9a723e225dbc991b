package store

import (
	"context"
	"database/sql"
	"reflect"
	"strings"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/matchpoint-api/matchpoint/internal/notify"
)

// AppendEvent lets tests record an event inside a transaction they hold.
var AppendEvent = appendEvent

// AddNotification and BlockedEitherWay let tests use the seams domains share.
var (
	AddNotification  = addNotification
	BlockedEitherWay = blockedEitherWay
	NotBlocked       = notBlocked
)

// AppendStream lets tests write stream events as a domain's change would.
var AppendStream = appendStream

// ScanStrings reads a one-column result of strings and closes rows.
var ScanStrings = scanStrings

// FlushPending writes the rows a transaction holds (its stream rows, its
// outbox events...) at once, as its end does.
var FlushPending = flushPending

// HoldNotifications holds notifications in tx until its work ends, as a
// message send's are.
func HoldNotifications(tx *sql.Tx, ns ...*notify.Notification) { pendingOf(tx).notes.add(ns...) }

// CredCache reports the state of db's cache of API keys: whether it is in
// use, how many keys it holds and how many lookups it answered.
func CredCache(db *DB) (live bool, entries int, hits uint64) {
	c := db.creds.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.live, len(c.entries), c.hits
}

// CredListenerPID is the PostgreSQL backend of db's credentials listener,
// or 0 while it is not connected.
func CredListenerPID(db *DB) uint32 {
	b := db.creds.barrier
	if b == nil {
		return 0
	}
	b.connMu.Lock()
	defer b.connMu.Unlock()
	if b.conn == nil {
		return 0
	}
	return b.conn.PID
}

// SQLiteText is a query as the SQLite connections give it to SQLite.
var SQLiteText = sqliteText

// Replans returns how many times SQLite has prepared again each statement
// of conn's cache whose text contains part (its SQLITE_STMTSTATUS_REPREPARE
// count), or nil on PostgreSQL. The driver keeps the connection's handle
// in an unexported field, read here by reflection: a test's probe only.
func Replans(ctx context.Context, conn *sql.Conn, part string) (out []int) {
	_ = conn.Raw(func(dc any) error {
		c, ok := dc.(*stmtConn)
		if !ok {
			return nil
		}
		handle := uintptr(reflect.ValueOf(c.sqliteConn).Elem().FieldByName("db").Uint())
		tls := libc.NewTLS()
		defer tls.Close()
		for s := sqlite3.Xsqlite3_next_stmt(tls, handle, 0); s != 0; s = sqlite3.Xsqlite3_next_stmt(tls, handle, s) {
			if strings.Contains(libc.GoString(sqlite3.Xsqlite3_sql(tls, s)), part) {
				out = append(out, int(sqlite3.Xsqlite3_stmt_status(tls, s, sqlite3.SQLITE_STMTSTATUS_REPREPARE, 0)))
			}
		}
		return nil
	})
	return out
}
