package store_test

import (
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/store"
)

// TestSQLiteLimitText: a LIMIT given as a bare parameter reaches SQLite
// read through CAST (SQLite would plan the statement again on every call);
// every other LIMIT, and every other text, is left as written.
func TestSQLiteLimitText(t *testing.T) {
	for in, want := range map[string]string{
		`SELECT id FROM t WHERE a = $1 ORDER BY id LIMIT $2`:           `SELECT id FROM t WHERE a = ? ORDER BY id LIMIT CAST(? AS INTEGER)`,
		"SELECT id FROM t ORDER BY id\n\t\tlimit ?":                    `SELECT id FROM t ORDER BY id` + "\n\t\t" + `LIMIT CAST(? AS INTEGER)`,
		`SELECT * FROM (SELECT id FROM t LIMIT $3) LIMIT $4 OFFSET $5`: `SELECT * FROM (SELECT id FROM t LIMIT CAST($3 AS INTEGER)) LIMIT CAST($4 AS INTEGER) OFFSET $5`,
		`SELECT id FROM t LIMIT 10`:                                    `SELECT id FROM t LIMIT 10`,
		`SELECT id FROM t LIMIT CAST(? AS INTEGER)`:                    `SELECT id FROM t LIMIT CAST(? AS INTEGER)`,
		`SELECT id FROM t LIMIT +$2`:                                   `SELECT id FROM t LIMIT +$2`,
		`SELECT rate_limit FROM plans WHERE id = $1`:                   `SELECT rate_limit FROM plans WHERE id = ?`,
		`UPDATE t SET x = $1 WHERE id IN (SELECT id FROM t LIMIT $2)`:  `UPDATE t SET x = ? WHERE id IN (SELECT id FROM t LIMIT CAST(? AS INTEGER))`,
	} {
		if got := store.SQLiteText(in); got != want {
			t.Errorf("%q\n got %q\nwant %q", in, got, want)
		}
	}
}

// TestSQLitePositionalText: parameters $1 ... $n, each once and in order,
// become plain "?"; any other use of them leaves the text as it is, and
// nothing inside quotes or comments is taken for a parameter.
func TestSQLitePositionalText(t *testing.T) {
	for in, want := range map[string]string{
		`INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4)`:     `INSERT INTO t (a, b) VALUES (?, ?), (?, ?)`,
		`SELECT 1 FROM t WHERE a = $1 OR b = $1`:             `SELECT 1 FROM t WHERE a = $1 OR b = $1`,
		`SELECT 1 FROM t WHERE a = $2 AND b = $1`:            `SELECT 1 FROM t WHERE a = $2 AND b = $1`,
		`SELECT 1 FROM t WHERE a = $1 AND b = $3`:            `SELECT 1 FROM t WHERE a = $1 AND b = $3`,
		`SELECT 1 FROM t WHERE a = '$1' AND b = $1`:          `SELECT 1 FROM t WHERE a = '$1' AND b = ?`,
		`SELECT 1 FROM t WHERE a = 'it''s $2' AND b = $1`:    `SELECT 1 FROM t WHERE a = 'it''s $2' AND b = ?`,
		`SELECT "$1" FROM t WHERE b = $1`:                    `SELECT "$1" FROM t WHERE b = ?`,
		"SELECT 1 FROM t -- by $2\nWHERE b = $1":             "SELECT 1 FROM t -- by $2\nWHERE b = ?",
		`SELECT 1 FROM t /* $2 */ WHERE b = $1 AND c = $2`:   `SELECT 1 FROM t /* $2 */ WHERE b = ? AND c = ?`,
		`SELECT json_extract(d, '$.a') FROM t WHERE id = $1`: `SELECT json_extract(d, '$.a') FROM t WHERE id = ?`,
		`SELECT 1 FROM t WHERE a = $10`:                      `SELECT 1 FROM t WHERE a = $10`,
		`SELECT 1`:                                           `SELECT 1`,
	} {
		if got := store.SQLiteText(in); got != want {
			t.Errorf("%q\n got %q\nwant %q", in, got, want)
		}
	}
}
