package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// Users implements users.Store.
type Users struct{ db *DB }

// NewUsers returns the users store over db.
func NewUsers(db *DB) *Users { return &Users{db: db} }

var _ users.Store = (*Users)(nil)

const userColumns = `id, COALESCE(email, ''), COALESCE(email_key, ''), username, username_key, first_name, last_name, COALESCE(password_hash, ''),
	location, latitude, longitude, travel_radius_km, bio, timezone, availability,
	profile_visibility, discoverable, show_location, verified, role, tier, rate_limit, created_at, updated_at, location_source, suspended_at, suspended_until`

type scanner interface{ Scan(...any) error }

func scanUser(row scanner, extra ...any) (*users.User, error) {
	var u users.User
	var lat, lon sql.NullFloat64
	var limit sql.NullInt64
	var avail string
	var created, updated int64
	var suspended, suspendedUntil sql.NullInt64
	dest := append([]any{&u.ID, &u.Email, &u.EmailKey, &u.Username, &u.UsernameKey, &u.FirstName, &u.LastName, &u.PasswordHash,
		&u.Location, &lat, &lon, &u.TravelRadiusKM, &u.Bio, &u.Timezone, &avail,
		&u.Privacy.ProfileVisibility, &u.Privacy.Discoverable, &u.Privacy.ShowLocation, &u.Verified,
		&u.Role, &u.Tier, &limit, &created, &updated, &u.LocationSource, &suspended, &suspendedUntil}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	if lat.Valid && lon.Valid {
		u.Latitude, u.Longitude = &lat.Float64, &lon.Float64
	}
	if limit.Valid {
		u.RateLimit = &limit.Int64
	}
	if err := json.Unmarshal([]byte(avail), &u.Availability); err != nil {
		return nil, fmt.Errorf("store: user %s availability: %w", u.ID, err)
	}
	u.CreatedAt, u.UpdatedAt = fromMicros(created), fromMicros(updated)
	u.Suspension = auth.SuspensionOf(fromNullMicros(suspended), fromNullMicros(suspendedUntil))
	return &u, nil
}

func saveSports(ctx context.Context, tx *sql.Tx, u *users.User) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM user_sports WHERE user_id = $1`, u.ID); err != nil {
		return fmt.Errorf("store: save sports: %w", err)
	}
	for i, s := range u.Sports {
		var level sql.NullString
		if l, ok := u.SkillLevels[s]; ok {
			level = sql.NullString{String: l, Valid: true}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO user_sports (user_id, sport, skill_level, position) VALUES ($1, $2, $3, $4)`,
			u.ID, s, level, i); err != nil {
			return fmt.Errorf("store: save sports: %w", err)
		}
	}
	return nil
}

// userConflict turns a unique violation into the error naming the field.
func userConflict(err error) error {
	if what, ok := uniqueViolation(err); ok {
		if strings.Contains(what, "email") {
			return apperr.Conflictf("email_taken", "email", "an account with this email already exists")
		}
		if strings.Contains(what, "username") {
			return apperr.Conflictf("username_taken", "username", "this username is taken")
		}
	}
	return err
}

func nullFloat(p *float64) sql.NullFloat64 {
	if p == nil {
		return sql.NullFloat64{}
	}
	return sql.NullFloat64{Float64: *p, Valid: true}
}

func nullInt(p *int64) sql.NullInt64 {
	if p == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: *p, Valid: true}
}

// locationSource is how the coordinates were obtained; coordinates of
// unknown origin count as the client's.
func locationSource(u *users.User) string {
	switch {
	case u.Latitude == nil:
		return users.LocationNone
	case u.LocationSource == "" || u.LocationSource == users.LocationNone:
		return users.LocationClient
	}
	return u.LocationSource
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// CreateUser inserts an account and its created event.
func (s *Users) CreateUser(ctx context.Context, u *users.User, ev *outbox.Event) error {
	avail, err := json.Marshal(u.Availability)
	if err != nil {
		return err
	}
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO users (id, email, email_key, username, username_key, first_name, last_name,
			password_hash, location, latitude, longitude, travel_radius_km, bio, timezone, availability,
			profile_visibility, discoverable, show_location, verified, role, tier, rate_limit, created_at, updated_at, location_source)
			VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25)`,
			u.ID, u.Email, u.EmailKey, u.Username, u.UsernameKey, u.FirstName, u.LastName,
			nullString(u.PasswordHash), u.Location, nullFloat(u.Latitude), nullFloat(u.Longitude), u.TravelRadiusKM,
			u.Bio, u.Timezone, string(avail), u.Privacy.ProfileVisibility, u.Privacy.Discoverable, u.Privacy.ShowLocation,
			u.Verified, u.Role, u.Tier, nullInt(u.RateLimit), micros(u.CreatedAt), micros(u.UpdatedAt), locationSource(u))
		if err != nil {
			return userConflict(fmt.Errorf("store: create user: %w", err))
		}
		if err := saveSports(ctx, tx, u); err != nil {
			return err
		}
		if err := onProfileSaved(ctx, tx, u); err != nil {
			return err
		}
		return appendEvent(ctx, tx, ev)
	})
}

// rowsQuerier is what both *DB (through its statement cache) and *sql.Tx offer.
type rowsQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// one reads a live account and its sports in one round trip: one row per
// sport (or a single row with NULLs when there are none). Every read of an
// account goes through it; lock takes the account's row lock for a
// transaction that will write it back (PostgreSQL; SQLite's IMMEDIATE
// transactions already hold the write lock).
func (s *Users) one(ctx context.Context, q rowsQuerier, lock bool, where string, arg any) (*users.User, error) {
	suffix := ""
	if lock && s.db.Dialect == Postgres {
		suffix = " FOR UPDATE OF users"
	}
	rows, err := q.QueryContext(ctx, `SELECT `+userColumns+`, user_sports.sport, user_sports.skill_level
		FROM users LEFT JOIN user_sports ON user_sports.user_id = users.id
		WHERE users.deleted_at IS NULL AND `+where+` ORDER BY user_sports.position`+suffix, arg)
	if err != nil {
		return nil, fmt.Errorf("store: get user: %w", err)
	}
	defer rows.Close()
	var u *users.User
	for rows.Next() {
		var sport, level sql.NullString
		row, err := scanUser(rows, &sport, &level)
		if err != nil {
			return nil, fmt.Errorf("store: get user: %w", err)
		}
		if u == nil {
			u = row
			u.Sports, u.SkillLevels = []string{}, map[string]string{}
		}
		if sport.Valid {
			u.Sports = append(u.Sports, sport.String)
			if level.Valid {
				u.SkillLevels[sport.String] = level.String
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: get user: %w", err)
	}
	if u == nil {
		return nil, apperr.NotFoundf("no such user")
	}
	return u, nil
}

// UserByID returns a live account.
func (s *Users) UserByID(ctx context.Context, id string) (*users.User, error) {
	return s.one(ctx, s.db, false, `users.id = $1`, id)
}

// UserByUsernameKey returns a live account by its username key.
func (s *Users) UserByUsernameKey(ctx context.Context, key string) (*users.User, error) {
	return s.one(ctx, s.db, false, `users.username_key = $1`, key)
}

// UserByEmailKey returns a live account by its email key.
func (s *Users) UserByEmailKey(ctx context.Context, key string) (*users.User, error) {
	return s.one(ctx, s.db, false, `users.email_key = $1`, key)
}

// ModifyUser changes an account under a row lock.
func (s *Users) ModifyUser(ctx context.Context, id string, fn func(u *users.User) (*outbox.Event, error)) (*users.User, error) {
	var out *users.User
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		u, err := s.one(ctx, tx, true, `users.id = $1`, id)
		if err != nil {
			return err
		}
		oldSports, oldLevels := slices.Clone(u.Sports), maps.Clone(u.SkillLevels)
		ev, err := fn(u)
		if err != nil {
			return err
		}
		avail, err := json.Marshal(u.Availability)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE users SET username = $2, username_key = $3, first_name = $4, last_name = $5,
			location = $6, latitude = $7, longitude = $8, travel_radius_km = $9, bio = $10, timezone = $11, availability = $12,
			profile_visibility = $13, discoverable = $14, show_location = $15, verified = $16, role = $17, tier = $18,
			rate_limit = $19, updated_at = $20, location_source = $21 WHERE id = $1`,
			u.ID, u.Username, u.UsernameKey, u.FirstName, u.LastName, u.Location,
			nullFloat(u.Latitude), nullFloat(u.Longitude), u.TravelRadiusKM, u.Bio, u.Timezone, string(avail),
			u.Privacy.ProfileVisibility, u.Privacy.Discoverable, u.Privacy.ShowLocation, u.Verified, u.Role, u.Tier,
			nullInt(u.RateLimit), micros(u.UpdatedAt), locationSource(u))
		if err != nil {
			return userConflict(fmt.Errorf("store: update user: %w", err))
		}
		noteCredentials(tx)
		if !slices.Equal(u.Sports, oldSports) || !maps.Equal(u.SkillLevels, oldLevels) {
			if err := saveSports(ctx, tx, u); err != nil {
				return err
			}
		}
		if err := onProfileSaved(ctx, tx, u); err != nil {
			return err
		}
		out = u
		return appendEvent(ctx, tx, ev)
	})
	return out, err
}

// DeleteUser anonymises the account and runs every domain's eraser in the
// same transaction. The row stays (with no personal data) so that references
// from other records keep pointing at "a deleted user" rather than at nothing.
func (s *Users) DeleteUser(ctx context.Context, id string, at time.Time, ev *outbox.Event) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE users SET email = NULL, email_key = NULL, username = $2, username_key = $2,
			first_name = '', last_name = '', password_hash = NULL, location = '', latitude = NULL, longitude = NULL,
			bio = '', availability = '[]', profile_visibility = 'private', discoverable = $3, show_location = $3, location_source = 'none',
			updated_at = $4, deleted_at = $4 WHERE id = $1 AND deleted_at IS NULL`, id, "deleted-"+id, false, micros(at))
		if err != nil {
			return fmt.Errorf("store: delete user: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return apperr.NotFoundf("no such user")
		}
		noteCredentials(tx)
		if err := eraseAccount(ctx, tx, erasure{UserID: id, At: at}); err != nil {
			return err
		}
		return appendEvent(ctx, tx, ev)
	})
}

func init() {
	keepColumn("users", "id", "the account row itself is anonymised by DeleteUser")
	deleteRowsOf("user_sports", "user_id")
	deleteRowsOf("web_sessions", "user_id")
	deleteRowsOf("oauth_consents", "user_id")
	deleteRowsOf("oauth_codes", "user_id")
	deleteRowsOf("verification_requests", "user_id")
	keepColumn("verification_requests", "reviewer_id", "who reviewed others' requests; it points at the anonymised account")
	revokeRowsOf("oauth_grants", "user_id")
	revokeRowsOf("api_keys", "user_id")
	revokeRowsOf("oauth_clients", "owner_id")
	// Stored responses of the account's credentials may hold its data. Their
	// owner column names a credential, not an account.
	registerEraser("idempotency_keys", nil, func(ctx context.Context, tx *sql.Tx, e erasure) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE owner IN (SELECT 'key:' || id FROM api_keys WHERE user_id = $1)
			OR owner IN (SELECT 'oauth:' || id || ':' || $1 FROM oauth_clients)`, e.UserID)
		return err
	})
}

// accountTier returns the tier of a live account: what credential rules
// (the admin scope) need of their owner, without reading the whole profile.
func accountTier(ctx context.Context, db *DB, userID string) (string, error) {
	var tier string
	err := db.QueryRowContext(ctx, `SELECT tier FROM users WHERE id = $1 AND deleted_at IS NULL`, userID).Scan(&tier)
	if errors.Is(err, sql.ErrNoRows) {
		return "", apperr.NotFoundf("no such user")
	}
	if err != nil {
		return "", fmt.Errorf("store: account tier: %w", err)
	}
	return tier, nil
}

// AccountTier implements oauth.Store.
func (s *OAuth) AccountTier(ctx context.Context, userID string) (string, error) {
	return accountTier(ctx, s.db, userID)
}

// AccountTier implements apikeys.Store.
func (s *APIKeys) AccountTier(ctx context.Context, userID string) (string, error) {
	return accountTier(ctx, s.db, userID)
}
