package store

import (
	"context"
	"fmt"
	"strings"
)

// SQLite's full-text indexes (FTS5) keep their postings in segments: each
// writing transaction adds one, and FTS5 merges them by levels, so an
// index written event by event holds dozens. A search looks each of its
// terms up in every segment and merges what each yields: with the place's
// cells among the terms, a text search near a place made a hundred such
// lookups in a 100,000-event index of 13 segments, an eighth of its CPU.
// Merged into one segment, the postings of a term are one list the index
// walks and skips through.

// mergeSteps bounds the work of one MergeTextIndexes call per index, in
// steps of mergePages pages written (FTS5 pages are 4 KB): a step is a
// short write transaction of its own, so writers wait for one step at a
// time, not for the whole merge.
const (
	mergePages = 256
	mergeSteps = 400
)

// mergedTextIndexes are the full-text indexes MergeTextIndexes keeps in one
// segment: events', searched near places with many terms and written
// seldom.
const mergedTextIndexes = `'events_fts'`

// MergeTextIndexes merges the segments of each SQLite full-text index that
// has more than maxSegments into one (bounded work per call: an index
// larger than the bound finishes on the next calls). PostgreSQL's GIN
// indexes need nothing of the kind.
//
// Only the indexes of mergedTextIndexes: messages are written all the
// time, so their index would be rewritten whole on every pass; FTS5's own
// merging by levels keeps it in check.
func (db *DB) MergeTextIndexes(ctx context.Context, maxSegments int) error {
	if db.Dialect != SQLite {
		return nil
	}
	rows, err := db.DB.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE % USING fts5%'
		AND name IN (`+mergedTextIndexes+`) ORDER BY name`)
	if err != nil {
		return fmt.Errorf("store: merge text indexes: %w", err)
	}
	names, err := scanStrings(rows)
	if err != nil {
		return fmt.Errorf("store: merge text indexes: %w", err)
	}
	for _, n := range names {
		if err := db.mergeTextIndex(ctx, n, maxSegments); err != nil {
			return err
		}
	}
	return nil
}

// mergeTextIndex merges the FTS5 table's segments into one if it has more
// than maxSegments.
func (db *DB) mergeTextIndex(ctx context.Context, table string, maxSegments int) error {
	quote := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var segments int
	if err := conn.QueryRowContext(ctx, `SELECT COUNT(DISTINCT segid) FROM `+quote(table+"_idx")).Scan(&segments); err != nil {
		return fmt.Errorf("store: merge %s: %w", table, err)
	}
	if segments <= maxSegments {
		return nil
	}
	// A negative page count merges segments of every level, until one is
	// left; the command changed nothing (fewer than two rows) once done.
	merge := `INSERT INTO ` + quote(table) + ` (` + quote(table) + `, rank) VALUES ('merge', ` + fmt.Sprint(-mergePages) + `)`
	for range mergeSteps {
		var before, after int64
		if err := conn.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&before); err != nil {
			return fmt.Errorf("store: merge %s: %w", table, err)
		}
		if _, err := conn.ExecContext(ctx, merge); err != nil {
			return fmt.Errorf("store: merge %s: %w", table, err)
		}
		if err := conn.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&after); err != nil {
			return fmt.Errorf("store: merge %s: %w", table, err)
		}
		if after-before < 2 {
			return nil
		}
	}
	return nil
}
