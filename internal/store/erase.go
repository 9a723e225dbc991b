package store

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"time"
)

// Account erasure is a registry: each domain's store file registers, next to
// the SQL that writes its rows, how an account's rows in each of its tables
// are erased (deleted, anonymised or tombstoned) or why a user column is
// kept. DeleteUser runs every eraser in the deletion's transaction, and a
// test fails for any user column in the schema that has neither, so a new
// domain cannot forget personal data.

// erasure is the account being erased and when.
type erasure struct {
	UserID string
	At     time.Time
}

type eraser struct {
	table   string
	columns []string // the user columns whose rows it handles
	erase   func(ctx context.Context, tx *sql.Tx, e erasure) error
}

var (
	erasers []eraser
	kept    = map[string]string{} // "table.column" -> why it is kept as it is
)

// registerEraser adds table's eraser for the given user columns. Call it from
// an init function of the file that owns the table.
func registerEraser(table string, columns []string, fn func(ctx context.Context, tx *sql.Tx, e erasure) error) {
	erasers = append(erasers, eraser{table: table, columns: columns, erase: fn})
}

// keepColumn records that table.column keeps pointing at an erased account,
// and why that holds no personal data (the account row itself is anonymised).
func keepColumn(table, column, because string) {
	kept[table+"."+column] = because
}

// deleteRowsOf is the common eraser: delete the account's rows of table.
func deleteRowsOf(table, column string) {
	q := `DELETE FROM ` + table + ` WHERE ` + column + ` = $1`
	registerEraser(table, []string{column}, func(ctx context.Context, tx *sql.Tx, e erasure) error {
		_, err := tx.ExecContext(ctx, q, e.UserID)
		return err
	})
}

// revokeRowsOf is the eraser of credentials: revoked, kept for the audit trail.
func revokeRowsOf(table, column string) {
	q := `UPDATE ` + table + ` SET revoked_at = $2 WHERE ` + column + ` = $1 AND revoked_at IS NULL`
	registerEraser(table, []string{column}, func(ctx context.Context, tx *sql.Tx, e erasure) error {
		_, err := tx.ExecContext(ctx, q, e.UserID, micros(e.At))
		return err
	})
}

// eraseAccount runs every registered eraser inside tx, after writing the
// rows tx holds (pending.go): the erasers then find, whatever their order,
// every event, stream row, notification and index term the batch added.
func eraseAccount(ctx context.Context, tx *sql.Tx, e erasure) error {
	if err := flushPending(ctx, tx); err != nil {
		return fmt.Errorf("store: erase: %w", err)
	}
	for _, er := range erasers {
		if err := er.erase(ctx, tx, e); err != nil {
			return fmt.Errorf("store: erase %s: %w", er.table, err)
		}
	}
	return nil
}

// ErasureCoverage lists every user column that erasure knows of, as
// "table.column" -> "erased" or "kept: <why>", for the test that compares it
// with the schema.
func ErasureCoverage() map[string]string {
	out := map[string]string{}
	for _, er := range erasers {
		for _, c := range er.columns {
			out[er.table+"."+c] = "erased"
		}
	}
	keys := make([]string, 0, len(kept))
	for k := range kept {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out[k] = "kept: " + kept[k]
	}
	return out
}
