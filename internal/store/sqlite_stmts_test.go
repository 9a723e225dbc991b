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
		`SELECT id FROM t WHERE a = $1 ORDER BY id LIMIT $2`:           `SELECT id FROM t WHERE a = $1 ORDER BY id LIMIT CAST($2 AS INTEGER)`,
		"SELECT id FROM t ORDER BY id\n\t\tlimit ?":                    `SELECT id FROM t ORDER BY id` + "\n\t\t" + `LIMIT CAST(? AS INTEGER)`,
		`SELECT * FROM (SELECT id FROM t LIMIT $3) LIMIT $4 OFFSET $5`: `SELECT * FROM (SELECT id FROM t LIMIT CAST($3 AS INTEGER)) LIMIT CAST($4 AS INTEGER) OFFSET $5`,
		`SELECT id FROM t LIMIT 10`:                                    `SELECT id FROM t LIMIT 10`,
		`SELECT id FROM t LIMIT CAST(? AS INTEGER)`:                    `SELECT id FROM t LIMIT CAST(? AS INTEGER)`,
		`SELECT id FROM t LIMIT +$2`:                                   `SELECT id FROM t LIMIT +$2`,
		`SELECT rate_limit FROM plans WHERE id = $1`:                   `SELECT rate_limit FROM plans WHERE id = $1`,
		`UPDATE t SET x = $1 WHERE id IN (SELECT id FROM t LIMIT $2)`:  `UPDATE t SET x = $1 WHERE id IN (SELECT id FROM t LIMIT CAST($2 AS INTEGER))`,
	} {
		if got := store.SQLiteText(in); got != want {
			t.Errorf("%q\n got %q\nwant %q", in, got, want)
		}
	}
}
