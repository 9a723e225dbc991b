package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/matching"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// profileHooks run inside the transaction that creates or changes a profile,
// after the account row is written: domains that keep derived rows about
// profiles (the matching index) refresh them there, so they never disagree.
var profileHooks []func(ctx context.Context, tx *sql.Tx, u *users.User) error

func onProfileSaved(ctx context.Context, tx *sql.Tx, u *users.User) error {
	for _, h := range profileHooks {
		if err := h(ctx, tx, u); err != nil {
			return err
		}
	}
	return nil
}

func init() {
	profileHooks = append(profileHooks, indexProfile)
	deleteRowsOf("match_index", "user_id")
}

// Recommendable says whether a profile may appear in other people's match
// results: discoverable, visible to every member, with a position and sports.
func Recommendable(u *users.User) bool {
	return u.Privacy.Discoverable && u.Privacy.ProfileVisibility == users.VisibilityMembers &&
		u.Latitude != nil && u.Longitude != nil && len(u.Sports) > 0 && u.Role != auth.RoleSystem
}

// IndexRows are the search index rows of a profile (none if it may not be
// recommended).
func IndexRows(u *users.User, pendingIn int) []IndexRow {
	if !Recommendable(u) {
		return nil
	}
	p := matching.ProfileOf(u, u.UpdatedAt)
	levels, week, cell := matching.EncodeLevels(p.Levels), p.Week.Bytes(), matching.Cell(p.Lat, p.Lon)
	out := make([]IndexRow, 0, len(u.Sports))
	for _, s := range u.Sports {
		out = append(out, IndexRow{Sport: s, Cell: cell, UserID: u.ID, Skill: p.Levels[s], Lat: p.Lat, Lon: p.Lon,
			RadiusKM: p.RadiusKM, Levels: levels, Week: week, ActiveAt: micros(p.ActiveAt), PendingIn: pendingIn})
	}
	return out
}

// IndexRow is one row of match_index.
type IndexRow struct {
	Sport     string
	Cell      int64
	UserID    string
	Skill     int
	Lat, Lon  float64
	RadiusKM  float64
	Levels    string
	Week      []byte
	ActiveAt  int64
	PendingIn int
}

// Args are the row's values in the order of IndexColumns.
func (r IndexRow) Args() []any {
	return []any{r.Sport, r.Cell, r.UserID, r.Skill, r.Lat, r.Lon, r.RadiusKM, r.Levels, r.Week, r.ActiveAt, r.PendingIn}
}

// IndexColumns are the columns of match_index, for inserts.
const IndexColumns = `sport, cell, user_id, skill, latitude, longitude, radius_km, levels, availability, active_at, pending_in`

func indexProfile(ctx context.Context, tx *sql.Tx, u *users.User) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM match_index WHERE user_id = $1`, u.ID); err != nil {
		return fmt.Errorf("store: unindex profile: %w", err)
	}
	if !Recommendable(u) {
		return nil
	}
	var pending int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM matches WHERE user2_id = $1 AND status = 'pending'`, u.ID).Scan(&pending); err != nil {
		return fmt.Errorf("store: index profile: %w", err)
	}
	for _, r := range IndexRows(u, pending) {
		if _, err := tx.ExecContext(ctx, `INSERT INTO match_index (`+IndexColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, r.Args()...); err != nil {
			return fmt.Errorf("store: index profile: %w", err)
		}
	}
	return nil
}

// refreshPending recounts the unanswered requests a person holds, which the
// search reads from the index to spare people who are flooded.
func refreshPending(ctx context.Context, tx *sql.Tx, userIDs ...string) error {
	for _, id := range userIDs {
		if _, err := tx.ExecContext(ctx, `UPDATE match_index SET pending_in =
			(SELECT COUNT(*) FROM matches WHERE user2_id = $1 AND status = 'pending') WHERE user_id = $1`, id); err != nil {
			return fmt.Errorf("store: count pending requests: %w", err)
		}
	}
	return nil
}
