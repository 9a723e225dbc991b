package store

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"
)

// Analyze refreshes the query planner's statistics, as a bulk load should
// before it serves searches.
//
// On SQLite it keeps only the summary statistics (sqlite_stat1), never
// STAT4's samples of index values (SQLite is built with STAT4): with
// samples on hand, SQLite plans a prepared statement again each time it
// runs with a new value compared to an indexed column, to check the
// samples for that value. Nearly every statement does that, so the
// samples turned every prepared statement back into a parse: a quarter of
// a message send's CPU, and a third of a text search's (the full-text
// index looks each term up with such a statement). The plans here depend
// on the shape of a query, not on which value it asks for.
//
// On SQLite it holds the write lock for the whole run (in this process's
// turn to write), one transaction over every table: it is for bulk loads,
// before a service takes traffic, not for a busy database.
//
// It also leaves out the tables a full-text index keeps its postings in
// (and drops their statistics if an earlier ANALYZE made some): their
// lookups have one plan whatever the statistics say.
func (db *DB) Analyze(ctx context.Context) error {
	if db.Dialect == Postgres {
		_, err := db.DB.ExecContext(ctx, `ANALYZE`)
		return err
	}
	leave, err := db.enterWrite(ctx)
	if err != nil {
		return err
	}
	defer leave()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	// The connection that ran ANALYZE keeps the samples it loaded in
	// memory after the table is dropped, so it leaves the pool (Raw's
	// driver.ErrBadConn closes it). A statement prepared with samples on
	// hand stays "plan again for each new value" for good, even once they
	// are gone: SQLite carries that mark over to every later preparation
	// of the statement.
	defer func() {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		conn.Close()
	}()
	// One transaction for all of it: other connections never see the
	// samples (they load statistics when the schema changes, and only a
	// commit shows them one), and one connection, because each ANALYZE
	// loads the statistics of the connection that runs it.
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: analyze: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	list := func(q string) ([]string, error) {
		rows, err := tx.QueryContext(ctx, q)
		if err != nil {
			return nil, err
		}
		return scanStrings(rows)
	}
	names, err := list(`SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite%'`)
	if err != nil {
		return fmt.Errorf("store: analyze: %w", err)
	}
	shadows, err := list(`SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'shadow'`)
	if err != nil {
		return fmt.Errorf("store: analyze: %w", err)
	}
	stats, err := list(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name IN ('sqlite_stat1', 'sqlite_stat4')`)
	if err != nil {
		return fmt.Errorf("store: analyze: %w", err)
	}
	for _, stat := range stats {
		for _, s := range shadows {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+stat+` WHERE tbl = $1`, s); err != nil {
				return fmt.Errorf("store: analyze: %w", err)
			}
		}
	}
	for _, n := range names {
		if _, err := tx.ExecContext(ctx, `ANALYZE "`+strings.ReplaceAll(n, `"`, `""`)+`"`); err != nil {
			return fmt.Errorf("store: analyze %s: %w", n, err)
		}
	}
	// Dropping the table (rather than emptying it) changes the schema, so
	// every open connection reloads its statistics, without samples.
	if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS sqlite_stat4`); err != nil {
		return fmt.Errorf("store: analyze: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: analyze: %w", err)
	}
	return nil
}
