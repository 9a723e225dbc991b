package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Column is one column of the live schema, as the engine reports it.
type Column struct {
	Name    string
	NotNull bool
	// References is the table a foreign key on this column points at.
	References string
}

// Index is one index of the live schema.
type Index struct {
	Name    string
	Columns []string
	Unique  bool
}

// Table is a table of the live schema.
type Table struct {
	Name    string
	Columns []Column
	Indexes []Index
}

// Schema reads the tables of the current database (the current schema on
// PostgreSQL), without goose's own table, sorted by name. Tests compare the
// two engines with it and check that erasure covers every user column.
func (db *DB) Schema(ctx context.Context) ([]Table, error) {
	names, err := db.strings(ctx, map[Dialect]string{
		// Ordinary tables only: a full-text index is a virtual table with
		// shadow tables of its own, which PostgreSQL does as an index.
		SQLite:   `SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'goose_db_version'`,
		Postgres: `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> 'goose_db_version'`,
	}[db.Dialect])
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []Table
	for _, n := range names {
		t := Table{Name: n}
		if t.Columns, err = db.columns(ctx, n); err != nil {
			return nil, err
		}
		if t.Indexes, err = db.indexes(ctx, n); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func (db *DB) strings(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := db.DB.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: schema: %w", err)
	}
	return scanStrings(rows)
}

func (db *DB) columns(ctx context.Context, table string) ([]Column, error) {
	refs := map[string]string{}
	var q, fk string
	if db.Dialect == SQLite {
		q = `SELECT name, "notnull" OR pk FROM pragma_table_info($1) ORDER BY cid`
		fk = `SELECT "from", "table" FROM pragma_foreign_key_list($1)`
	} else {
		// Stored columns only: a generated column is derived data, like an
		// index (SQLite's table_info leaves them out too).
		q = `SELECT column_name, is_nullable = 'NO' FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = $1 AND is_generated = 'NEVER' ORDER BY ordinal_position`
		fk = `SELECT kcu.column_name, ccu.table_name FROM information_schema.table_constraints tc
			JOIN information_schema.key_column_usage kcu ON kcu.constraint_name = tc.constraint_name AND kcu.table_schema = tc.table_schema
			JOIN information_schema.constraint_column_usage ccu ON ccu.constraint_name = tc.constraint_name AND ccu.table_schema = tc.table_schema
			WHERE tc.constraint_type = 'FOREIGN KEY' AND tc.table_schema = current_schema() AND tc.table_name = $1`
	}
	rows, err := db.DB.QueryContext(ctx, fk, table)
	if err != nil {
		return nil, fmt.Errorf("store: schema: %w", err)
	}
	for rows.Next() {
		var col, ref string
		if err := rows.Scan(&col, &ref); err != nil {
			rows.Close()
			return nil, err
		}
		refs[col] = ref
	}
	rows.Close()
	rows, err = db.DB.QueryContext(ctx, q, table)
	if err != nil {
		return nil, fmt.Errorf("store: schema: %w", err)
	}
	defer rows.Close()
	var out []Column
	for rows.Next() {
		var c Column
		if err := rows.Scan(&c.Name, &c.NotNull); err != nil {
			return nil, err
		}
		c.References = refs[c.Name]
		out = append(out, c)
	}
	return out, rows.Err()
}

func (db *DB) indexes(ctx context.Context, table string) ([]Index, error) {
	var q string
	if db.Dialect == SQLite {
		// Named indexes only: SQLite's automatic ones mirror UNIQUE and
		// PRIMARY KEY constraints, whose PostgreSQL twins are constraints.
		// (On PostgreSQL, indexes of expressions or generated columns only
		// are left out: derived data, which each engine indexes its way.)
		q = `SELECT il.name, il."unique", group_concat(ii.name, ',') FROM pragma_index_list($1) il
			JOIN pragma_index_info(il.name) ii WHERE il.origin = 'c' GROUP BY il.name, il."unique"`
	} else {
		q = `SELECT i.relname, ix.indisunique, string_agg(a.attname, ',' ORDER BY k.ord)
			FROM pg_index ix JOIN pg_class t ON t.oid = ix.indrelid JOIN pg_class i ON i.oid = ix.indexrelid
			JOIN pg_namespace n ON n.oid = t.relnamespace
			CROSS JOIN LATERAL unnest(ix.indkey) WITH ORDINALITY AS k(attnum, ord)
			JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum AND a.attgenerated = ''
			LEFT JOIN pg_constraint c ON c.conindid = ix.indexrelid
			WHERE n.nspname = current_schema() AND t.relname = $1 AND c.oid IS NULL
			GROUP BY i.relname, ix.indisunique`
	}
	rows, err := db.DB.QueryContext(ctx, q, table)
	if err != nil {
		return nil, fmt.Errorf("store: schema: %w", err)
	}
	defer rows.Close()
	var out []Index
	for rows.Next() {
		var ix Index
		var cols string
		if err := rows.Scan(&ix.Name, &ix.Unique, &cols); err != nil {
			return nil, err
		}
		ix.Columns = strings.Split(cols, ",")
		out = append(out, ix)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, rows.Err()
}
