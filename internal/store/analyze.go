package store

import (
	"context"
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
// It also leaves out the tables a full-text index keeps its postings in
// (and drops their statistics if an earlier ANALYZE made some): their
// lookups have one plan whatever the statistics say.
func (db *DB) Analyze(ctx context.Context) error {
	if db.Dialect == Postgres {
		_, err := db.DB.ExecContext(ctx, `ANALYZE`)
		return err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// One connection for all of it: each ANALYZE reloads the statistics of
	// the connection that runs it.
	list := func(q string) ([]string, error) {
		rows, err := conn.QueryContext(ctx, q)
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
			if _, err := conn.ExecContext(ctx, `DELETE FROM `+stat+` WHERE tbl = $1`, s); err != nil {
				return fmt.Errorf("store: analyze: %w", err)
			}
		}
	}
	for _, n := range names {
		if _, err := conn.ExecContext(ctx, `ANALYZE "`+strings.ReplaceAll(n, `"`, `""`)+`"`); err != nil {
			return fmt.Errorf("store: analyze %s: %w", n, err)
		}
	}
	// Dropping the table (rather than emptying it) changes the schema, so
	// every open connection reloads its statistics without the samples.
	if _, err := conn.ExecContext(ctx, `DROP TABLE IF EXISTS sqlite_stat4`); err != nil {
		return fmt.Errorf("store: analyze: %w", err)
	}
	return nil
}
