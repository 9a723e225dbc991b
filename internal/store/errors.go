package store

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// uniqueViolation reports whether err is a unique-constraint failure on
// either engine, and names what was violated ("users.email_key" on SQLite,
// the constraint name on PostgreSQL). Callers match a column name in it.
func uniqueViolation(err error) (string, bool) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return pe.ConstraintName, true
	}
	var se *sqlite.Error
	if errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY) {
		msg := se.Error()
		if i := strings.Index(msg, "failed: "); i >= 0 {
			return msg[i+len("failed: "):], true
		}
		return msg, true
	}
	return "", false
}
