package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/notifications"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
)

// Notifications implements notifications.Store and notifications.JobStore.
type Notifications struct{ db *DB }

// NewNotifications returns the notifications store over db.
func NewNotifications(db *DB) *Notifications { return &Notifications{db: db} }

var (
	_ notifications.Store    = (*Notifications)(nil)
	_ notifications.JobStore = (*Notifications)(nil)
)

const notificationColumns = `n.id, n.user_id, n.kind, n.title, n.body, n.data, n.collapse_key, n.count, n.created_at, n.updated_at, n.read_at, n.delivered_at`

// returnedNotification is notificationColumns for RETURNING, where SQLite
// takes no table names.
const returnedNotification = `id, user_id, kind, title, body, data, collapse_key, count, created_at, updated_at, read_at, delivered_at`

func scanNotification(row scanner, extra ...any) (*notifications.Record, error) {
	var r notifications.Record
	var data string
	var created, updated int64
	var read, delivered sql.NullInt64
	dest := append([]any{&r.ID, &r.UserID, &r.Kind, &r.Title, &r.Body, &data, &r.CollapseKey, &r.Count, &created, &updated, &read, &delivered}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(data), &r.Data); err != nil {
		return nil, fmt.Errorf("store: notification %s data: %w", r.ID, err)
	}
	r.CreatedAt, r.UpdatedAt, r.ReadAt, r.DeliveredAt = fromMicros(created), fromMicros(updated), fromNullMicros(read), fromNullMicros(delivered)
	return &r, nil
}

// List pages through the centre by latest activity, newest first.
func (s *Notifications) List(ctx context.Context, userID string, unread bool, after *notifications.Cursor, limit int) ([]*notifications.Record, error) {
	q := `SELECT ` + notificationColumns + ` FROM notifications n WHERE n.user_id = $1 AND n.in_app = $2`
	args := []any{userID, true}
	if unread {
		q += ` AND n.read_at IS NULL`
	}
	if after != nil {
		q += ` AND (n.updated_at < $3 OR (n.updated_at = $3 AND n.id < $4))`
		args = append(args, micros(after.UpdatedAt), after.ID)
	}
	q += fmt.Sprintf(` ORDER BY n.updated_at DESC, n.id DESC LIMIT $%d`, len(args)+1)
	rows, err := s.db.QueryContext(ctx, q, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("store: list notifications: %w", err)
	}
	defer rows.Close()
	var out []*notifications.Record
	for rows.Next() {
		r, err := scanNotification(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list notifications: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func notFoundNotification(id string) error { return apperr.NotFoundf("no notification %q", id) }

// Get returns one of the user's notifications, in the centre or not.
func (s *Notifications) Get(ctx context.Context, userID, id string) (*notifications.Record, error) {
	r, err := scanNotification(s.db.QueryRowContext(ctx, `SELECT `+notificationColumns+` FROM notifications n WHERE n.id = $1 AND n.user_id = $2`, id, userID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFoundNotification(id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get notification: %w", err)
	}
	return r, nil
}

// MarkRead sets read_at once.
func (s *Notifications) MarkRead(ctx context.Context, userID, id string, now time.Time) (*notifications.Record, error) {
	r, err := scanNotification(s.db.QueryRowContext(ctx, `UPDATE notifications SET read_at = COALESCE(read_at, $3)
		WHERE id = $1 AND user_id = $2 RETURNING `+returnedNotification, id, userID, micros(now)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFoundNotification(id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: read notification: %w", err)
	}
	return r, nil
}

// MarkAllRead marks the unread notifications at or after upTo in the list.
func (s *Notifications) MarkAllRead(ctx context.Context, userID string, upTo *notifications.Cursor, now time.Time) (int64, error) {
	q := `UPDATE notifications SET read_at = $2 WHERE user_id = $1 AND read_at IS NULL`
	args := []any{userID, micros(now)}
	if upTo != nil {
		q += ` AND (updated_at < $3 OR (updated_at = $3 AND id <= $4))`
		args = append(args, micros(upTo.UpdatedAt), upTo.ID)
	}
	res, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("store: read notifications: %w", err)
	}
	return res.RowsAffected()
}

// UnreadCount counts the centre's unread notifications.
func (s *Notifications) UnreadCount(ctx context.Context, userID string) (int64, error) {
	var n int64
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM notifications WHERE user_id = $1 AND read_at IS NULL AND in_app = $2`,
		userID, true).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count notifications: %w", err)
	}
	return n, nil
}

// AckDelivered sets delivered_at and records the event, the first time.
func (s *Notifications) AckDelivered(ctx context.Context, userID, id string, now time.Time, event func(*notifications.Record) (*outbox.Event, error)) (*notifications.Record, bool, error) {
	var out *notifications.Record
	var first bool
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		r, err := scanNotification(tx.QueryRowContext(ctx, `UPDATE notifications SET delivered_at = $3
			WHERE id = $1 AND user_id = $2 AND delivered_at IS NULL RETURNING `+returnedNotification, id, userID, micros(now)))
		if errors.Is(err, sql.ErrNoRows) {
			r, err = scanNotification(tx.QueryRowContext(ctx, `SELECT `+notificationColumns+` FROM notifications n WHERE n.id = $1 AND n.user_id = $2`, id, userID))
			if errors.Is(err, sql.ErrNoRows) {
				return notFoundNotification(id)
			}
			out = r
			return err
		}
		if err != nil {
			return err
		}
		out, first = r, true
		ev, err := event(r)
		if err != nil {
			return err
		}
		return appendEvent(ctx, tx, ev)
	})
	if err != nil {
		if _, ok := apperr.As(err); ok {
			return nil, false, err
		}
		return nil, false, fmt.Errorf("store: acknowledge notification: %w", err)
	}
	return out, first, nil
}

// AddNotifications writes ns in one transaction through addNotifications,
// the way a domain's change does (a group message notifies every member):
// for tools and benchmarks that drive the seam without a domain.
func (s *Notifications) AddNotifications(ctx context.Context, ns []*notify.Notification) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error { return addNotifications(ctx, tx, ns) })
}
