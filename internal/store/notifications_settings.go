package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/notifications"
)

func init() {
	deleteRowsOf("notification_settings", "user_id")
}

// Settings returns the user's preferences (the defaults when none were set).
func (s *Notifications) Settings(ctx context.Context, userID string) (*notifications.Settings, error) {
	r, err := loadRecipient(ctx, s.db, userID)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && r.deleted) {
		return nil, apperr.NotFoundf("no user %q", userID)
	}
	if err != nil {
		return nil, fmt.Errorf("store: notification settings: %w", err)
	}
	return &r.settings, nil
}

// UpdateSettings changes the preferences under a row lock, so that two
// changes at once both apply.
func (s *Notifications) UpdateSettings(ctx context.Context, userID string, now time.Time, change func(*notifications.Settings) error) (*notifications.Settings, error) {
	var out *notifications.Settings
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO notification_settings (user_id, updated_at)
			SELECT id, $2 FROM users WHERE id = $1 AND deleted_at IS NULL ON CONFLICT (user_id) DO NOTHING`, userID, micros(now)); err != nil {
			return err
		}
		var lock int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM notification_settings WHERE user_id = $1`+s.db.forUpdate(), userID).Scan(&lock); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return apperr.NotFoundf("no user %q", userID)
			}
			return err
		}
		r, err := loadRecipient(ctx, tx, userID)
		if err != nil {
			return err
		}
		st := r.settings
		if err := change(&st); err != nil {
			return err
		}
		var qs, qe string
		if st.QuietHours != nil {
			qs, qe = st.QuietHours.Start, st.QuietHours.End
		}
		if _, err := tx.ExecContext(ctx, `UPDATE notification_settings SET channels = $2, quiet_start = $3, quiet_end = $4, updated_at = $5
			WHERE user_id = $1`, userID, notifications.EncodeOverrides(st.Overrides), qs, qe, micros(now)); err != nil {
			return err
		}
		st.UpdatedAt = &now
		out = &st
		return nil
	})
	if err != nil {
		if _, ok := apperr.As(err); ok {
			return nil, err
		}
		return nil, fmt.Errorf("store: update notification settings: %w", err)
	}
	return out, nil
}
