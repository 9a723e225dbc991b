package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/matchpoint-api/matchpoint/internal/users"
)

// SeedUsers writes generated accounts with their sports and search index
// rows in one transaction of multi-row INSERTs: the fast path of
// `matchpoint seed`, bypassing the one-account-at-a-time service (and its
// user.created events, which demo data has no subscriber for). passwordHash
// is every account's password hash, or empty for accounts that cannot sign in.
func (db *DB) SeedUsers(ctx context.Context, us []*users.User, passwordHash string) error {
	var userRows, sportRows, indexRows [][]any
	for _, u := range us {
		avail, err := json.Marshal(u.Availability)
		if err != nil {
			return err
		}
		userRows = append(userRows, []any{u.ID, u.Email, strings.ToLower(u.Email), u.Username, strings.ToLower(u.Username),
			u.FirstName, u.LastName, nullString(passwordHash), u.Location, nullFloat(u.Latitude), nullFloat(u.Longitude),
			u.TravelRadiusKM, u.Bio, u.Timezone, string(avail), u.Privacy.ProfileVisibility, u.Privacy.Discoverable,
			u.Privacy.ShowLocation, u.Verified, u.Role, u.Tier, micros(u.CreatedAt), micros(u.UpdatedAt), locationSource(u)})
		for i, s := range u.Sports {
			sportRows = append(sportRows, []any{u.ID, s, nullString(u.SkillLevels[s]), i})
		}
		for _, r := range IndexRows(u, 0) {
			indexRows = append(indexRows, r.Args())
		}
	}
	if db.Dialect == Postgres {
		return db.copyRows(ctx, []copyTable{
			{"users", []string{"id", "email", "email_key", "username", "username_key", "first_name", "last_name",
				"password_hash", "location", "latitude", "longitude", "travel_radius_km", "bio", "timezone", "availability",
				"profile_visibility", "discoverable", "show_location", "verified", "role", "tier", "created_at", "updated_at", "location_source"}, userRows},
			{"user_sports", []string{"user_id", "sport", "skill_level", "position"}, sportRows},
			{"match_index", strings.Split(strings.ReplaceAll(IndexColumns, " ", ""), ","), indexRows},
		})
	}
	return db.Tx(ctx, func(tx *sql.Tx) error {
		if db.Dialect == SQLite {
			// A larger page cache for this connection: the unique indexes of a
			// million accounts do not fit the default 2 MB.
			if _, err := tx.ExecContext(ctx, `PRAGMA cache_size = -262144`); err != nil {
				return err
			}
		}
		if err := insertRows(ctx, tx, db.Dialect, `INSERT INTO users (id, email, email_key, username, username_key, first_name, last_name,
			password_hash, location, latitude, longitude, travel_radius_km, bio, timezone, availability, profile_visibility,
			discoverable, show_location, verified, role, tier, created_at, updated_at, location_source) VALUES `, userRows); err != nil {
			return fmt.Errorf("store: seed users: %w", err)
		}
		if err := insertRows(ctx, tx, db.Dialect, `INSERT INTO user_sports (user_id, sport, skill_level, position) VALUES `, sportRows); err != nil {
			return fmt.Errorf("store: seed sports: %w", err)
		}
		if err := insertRows(ctx, tx, db.Dialect, `INSERT INTO match_index (`+IndexColumns+`) VALUES `, indexRows); err != nil {
			return fmt.Errorf("store: seed match index: %w", err)
		}
		return nil
	})
}

// param is the nth positional parameter of a statement. Long statements use
// "?" on SQLite: the driver looks each "$N" up by name, which costs time
// growing with the square of their number.
func (d Dialect) param(n int) string {
	if d == SQLite {
		return "?"
	}
	return fmt.Sprintf("$%d", n)
}

// insertRows runs multi-row INSERTs of at most ~10,000 parameters each (under
// both engines' limits), preparing each statement shape once.
func insertRows(ctx context.Context, tx *sql.Tx, d Dialect, head string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	cols := len(rows[0])
	per := max(1, 10000/cols)
	stmts := map[int]*sql.Stmt{}
	defer func() {
		for _, st := range stmts {
			st.Close()
		}
	}()
	args := make([]any, 0, per*cols)
	for start := 0; start < len(rows); start += per {
		chunk := rows[start:min(start+per, len(rows))]
		st := stmts[len(chunk)]
		if st == nil {
			var b strings.Builder
			b.WriteString(head)
			n := 1
			for i := range chunk {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteByte('(')
				for c := range cols {
					if c > 0 {
						b.WriteString(", ")
					}
					b.WriteString(d.param(n))
					n++
				}
				b.WriteByte(')')
			}
			var err error
			if st, err = tx.PrepareContext(ctx, b.String()); err != nil {
				return err
			}
			stmts[len(chunk)] = st
		}
		args = args[:0]
		for _, r := range chunk {
			args = append(args, r...)
		}
		if _, err := st.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

// OptimizeMatchIndex finishes a bulk load: it refreshes the planner's
// statistics; on PostgreSQL it rewrites the search index in key order, so
// that the rows of one cell range sit on a few pages (SQLite keeps
// match_index in key order by itself: it is a WITHOUT ROWID table); on
// SQLite it checkpoints the write-ahead log.
func (db *DB) OptimizeMatchIndex(ctx context.Context) error {
	if db.Dialect == Postgres {
		if _, err := db.DB.ExecContext(ctx, `CLUSTER match_index USING match_index_pkey`); err != nil {
			return fmt.Errorf("store: cluster match index: %w", err)
		}
		_, err := db.DB.ExecContext(ctx, `VACUUM ANALYZE`)
		return err
	}
	if err := db.Analyze(ctx); err != nil {
		return err
	}
	// Move the bulk load out of the write-ahead log now, rather than in the
	// commit of whichever request writes next.
	_, err := db.DB.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

type copyTable struct {
	name string
	cols []string
	rows [][]any
}

// copyRows writes tables with PostgreSQL's COPY protocol, in one transaction.
func (db *DB) copyRows(ctx context.Context, tables []copyTable) error {
	conn, err := db.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		tx, err := pc.Begin(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(ctx) }()
		for _, t := range tables {
			for _, r := range t.rows {
				for i, v := range r {
					r[i] = plain(v)
				}
			}
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{t.name}, t.cols, pgx.CopyFromRows(t.rows)); err != nil {
				return fmt.Errorf("store: copy %s: %w", t.name, err)
			}
		}
		return tx.Commit(ctx)
	})
}

// plain turns database/sql null wrappers into what COPY encodes.
func plain(v any) any {
	switch x := v.(type) {
	case sql.NullString:
		if !x.Valid {
			return nil
		}
		return x.String
	case sql.NullFloat64:
		if !x.Valid {
			return nil
		}
		return x.Float64
	case sql.NullInt64:
		if !x.Valid {
			return nil
		}
		return x.Int64
	case int:
		return int64(x)
	}
	return v
}
