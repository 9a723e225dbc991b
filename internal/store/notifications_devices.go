package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/notifications"
)

func init() {
	// A device's queued jobs go with it (ON DELETE CASCADE).
	deleteRowsOf("push_devices", "user_id")
}

const deviceColumns = `id, user_id, platform, token, p256dh, auth, name, created_at, last_used_at`

func scanDevice(row scanner) (*notifications.Device, error) {
	var d notifications.Device
	var created int64
	var used sql.NullInt64
	if err := row.Scan(&d.ID, &d.UserID, &d.Platform, &d.Token, &d.P256DH, &d.Auth, &d.Name, &created, &used); err != nil {
		return nil, err
	}
	d.CreatedAt, d.LastUsedAt = fromMicros(created), fromNullMicros(used)
	return &d, nil
}

// RegisterDevice adds d or refreshes the same target, then keeps the
// account's newest limit devices.
func (s *Notifications) RegisterDevice(ctx context.Context, d *notifications.Device, limit int) (*notifications.Device, error) {
	var out *notifications.Device
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		cur, err := scanDevice(tx.QueryRowContext(ctx, `SELECT `+deviceColumns+` FROM push_devices WHERE platform = $1 AND token = $2`+s.db.forUpdate(),
			d.Platform, d.Token))
		switch {
		case err == nil && cur.UserID == d.UserID:
			// The same subscription again: new keys (a browser may rotate
			// them), same id.
			out, err = scanDevice(tx.QueryRowContext(ctx, `UPDATE push_devices SET p256dh = $2, auth = $3, name = $4
				WHERE id = $1 RETURNING `+deviceColumns, cur.ID, d.P256DH, d.Auth, d.Name))
			return err
		case err == nil:
			// The device changed hands (another account signed in on it):
			// the previous account must not get this device's pushes.
			if _, err := tx.ExecContext(ctx, `DELETE FROM push_devices WHERE id = $1`, cur.ID); err != nil {
				return err
			}
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		out, err = scanDevice(tx.QueryRowContext(ctx, `INSERT INTO push_devices (id, user_id, platform, token, p256dh, auth, name, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING `+deviceColumns,
			d.ID, d.UserID, d.Platform, d.Token, d.P256DH, d.Auth, d.Name, micros(d.CreatedAt)))
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM push_devices WHERE user_id = $1 AND id NOT IN (
			SELECT id FROM push_devices WHERE user_id = $1 ORDER BY COALESCE(last_used_at, created_at) DESC, id DESC LIMIT $2)`, d.UserID, limit)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: register device: %w", err)
	}
	return out, nil
}

// Devices pages through the account's devices by id.
func (s *Notifications) Devices(ctx context.Context, userID, after string, limit int) ([]*notifications.Device, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+deviceColumns+` FROM push_devices WHERE user_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
		userID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list devices: %w", err)
	}
	defer rows.Close()
	var out []*notifications.Device
	for rows.Next() {
		d, err := scanDevice(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list devices: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// DeleteDevice removes one of the account's devices.
func (s *Notifications) DeleteDevice(ctx context.Context, userID, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM push_devices WHERE id = $1 AND user_id = $2`, id, userID)
	if err != nil {
		return fmt.Errorf("store: delete device: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return apperr.NotFoundf("no device %q", id)
	}
	return nil
}
