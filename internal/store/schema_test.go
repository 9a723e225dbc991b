package store_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
)

// personColumn matches column names that hold an account id even without a
// foreign key to users.
var personColumn = regexp.MustCompile(`(^|_)(user|owner|reviewer|creator|sender|author|blocker|blocked|reporter|member|recipient|requester|invitee|inviter|actor|moderator|operator|subject|user1|user2)_id$`)

// userColumns lists "table.column" for every column that holds an account id:
// a foreign key to users, or a name that says so.
func userColumns(t *testing.T, db *store.DB) []string {
	t.Helper()
	tables, err := db.Schema(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tb := range tables {
		for _, c := range tb.Columns {
			if c.References == "users" || personColumn.MatchString(c.Name) || (tb.Name == "users" && c.Name == "id") {
				out = append(out, tb.Name+"."+c.Name)
			}
		}
	}
	return out
}

// TestErasureCoversEveryUserColumn fails when a table gains a column that
// holds an account id and no eraser or "kept, because" entry covers it.
func TestErasureCoversEveryUserColumn(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		cover := store.ErasureCoverage()
		cols := userColumns(t, db)
		if len(cols) < 10 {
			t.Fatalf("found only %v: the schema reader is broken", cols)
		}
		for _, c := range cols {
			if _, ok := cover[c]; !ok {
				t.Errorf("%s holds an account id but no eraser covers it: register one in the store file of its table (or keepColumn with the reason)", c)
			}
		}
		for c := range cover {
			if !slices.Contains(cols, c) && !strings.HasPrefix(c, "idempotency_keys.") {
				t.Errorf("erasure names %s, which is not a user column of the schema", c)
			}
		}
	})
}

// TestSchemaParity compares the two engines' migrated schemas: the same
// tables, columns, nullability, foreign keys and indexes.
func TestSchemaParity(t *testing.T) {
	engines := testdb.Engines()
	if len(engines) < 2 {
		t.Skip(testdb.EnvPostgres + " is not set")
	}
	describe := func(db *store.DB) []string {
		tables, err := db.Schema(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tb := range tables {
			for _, c := range tb.Columns {
				out = append(out, fmt.Sprintf("%s.%s notnull=%v ref=%s", tb.Name, c.Name, c.NotNull, c.References))
			}
			for _, ix := range tb.Indexes {
				out = append(out, fmt.Sprintf("%s index %s(%s) unique=%v", tb.Name, ix.Name, strings.Join(ix.Columns, ","), ix.Unique))
			}
		}
		return out
	}
	lite := describe(testdb.Open(t, testdb.NewURL(t, store.SQLite)))
	pg := describe(testdb.Open(t, testdb.NewURL(t, store.Postgres)))
	for _, l := range lite {
		if !slices.Contains(pg, l) {
			t.Errorf("SQLite has, PostgreSQL lacks: %s", l)
		}
	}
	for _, l := range pg {
		if !slices.Contains(lite, l) {
			t.Errorf("PostgreSQL has, SQLite lacks: %s", l)
		}
	}
}
