package store

import (
	"context"
	"fmt"
	"strings"
)

// Analyze refreshes the query planner's statistics, as a bulk load should
// before it serves searches.
//
// On SQLite it leaves out the tables a full-text index keeps its postings
// in (and drops their statistics if an earlier ANALYZE made some). The
// index looks a term up in its segments with a statement it prepares once
// and runs with new values each time; with samples of that table on hand
// (SQLite is built with STAT4), every new value makes SQLite plan the
// statement again, once per term and segment of every text search: that
// was a third of a search's CPU. The lookups have one plan whatever the
// statistics say, so they lose nothing.
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
	return nil
}
