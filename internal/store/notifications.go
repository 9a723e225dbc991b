package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/matchpoint-api/matchpoint/internal/notifications"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

func init() {
	// Deleting the notifications also deletes their queued jobs (ON DELETE
	// CASCADE); the jobs' own eraser is registered with the queue.
	deleteRowsOf("notifications", "user_id")
}

// Hooks of addNotification for domains built beside this one, registered
// from an init function of their store file, as erasers are.
var (
	muteChecks []func(ctx context.Context, tx *sql.Tx, ns []*notify.Notification) ([]bool, error)
	publishers []func(ctx context.Context, tx *sql.Tx, ns []*notify.Notification) error
)

// registerMuteCheck adds a check that silences a notification: when one
// says muted, the notification is still kept in the centre but neither
// pushed nor mailed.
func registerMuteCheck(fn func(ctx context.Context, tx *sql.Tx, n *notify.Notification) (bool, error)) {
	registerMuteChecks(func(ctx context.Context, tx *sql.Tx, ns []*notify.Notification) ([]bool, error) {
		muted := make([]bool, len(ns))
		for i, n := range ns {
			m, err := fn(ctx, tx, n)
			if err != nil {
				return nil, err
			}
			muted[i] = m
		}
		return muted, nil
	})
}

// registerMuteChecks is registerMuteCheck for a check that answers for
// several notifications at once (a muted conversation: the messaging store
// reads its members' mutes in one query), saying which are muted.
func registerMuteChecks(fn func(ctx context.Context, tx *sql.Tx, ns []*notify.Notification) ([]bool, error)) {
	muteChecks = append(muteChecks, fn)
}

// registerNotificationPublisher adds a function called with the
// notifications that enter or change in the centre, all those one change
// writes at once, inside the transaction that writes them: the real-time
// stream appends its events there, so that they commit (and are replayed)
// with the notifications.
func registerNotificationPublisher(fn func(ctx context.Context, tx *sql.Tx, ns []*notify.Notification) error) {
	publishers = append(publishers, fn)
}

// recipient is what addNotification reads of the notified person.
type recipient struct {
	email    string
	deleted  bool
	settings notifications.Settings
	devices  bool // has push devices (read by loadRecipients only)
}

// reaches says whether a push or an email of choice can go to r: the only
// reasons to silence a notification (a mute), or to keep one with the
// centre off.
func (r *recipient) reaches(c notifications.Choice) bool {
	return (c.Push && r.devices) || (c.Email && r.email != "")
}

func loadRecipient(ctx context.Context, q querier, userID string) (*recipient, error) {
	return scanRecipient(q.QueryRowContext(ctx, `SELECT `+recipientColumns+` FROM `+recipientTables+` WHERE u.id = $1`, userID))
}

// loadRecipients reads the recipients of userIDs (strings) by id; an id
// with no account is left out.
func loadRecipients(ctx context.Context, tx *sql.Tx, userIDs []any) (map[string]*recipient, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+recipientColumns+`, u.id,
		EXISTS (SELECT 1 FROM push_devices d WHERE d.user_id = u.id)
		FROM `+recipientTables+` WHERE u.id IN (`+placeholders(1, len(userIDs))+`)`, userIDs...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string]*recipient, len(userIDs))
	for rows.Next() {
		var id string
		var devices bool
		r, err := scanRecipient(rows, &id, &devices)
		if err != nil {
			return nil, err
		}
		r.devices = devices
		out[id] = r
	}
	return out, rows.Err()
}

// recipientColumns are what scanRecipient reads, from recipientTables.
const (
	recipientColumns = `COALESCE(u.email, ''), u.timezone, u.deleted_at,
		COALESCE(s.channels, ''), COALESCE(s.quiet_start, ''), COALESCE(s.quiet_end, ''), s.updated_at`
	recipientTables = `users u LEFT JOIN notification_settings s ON s.user_id = u.id`
)

func scanRecipient(row scanner, extra ...any) (*recipient, error) {
	var r recipient
	var deleted, updated sql.NullInt64
	var channels, qs, qe string
	if err := row.Scan(append([]any{&r.email, &r.settings.Timezone, &deleted, &channels, &qs, &qe, &updated}, extra...)...); err != nil {
		return nil, err
	}
	r.deleted = deleted.Valid
	var err error
	if r.settings.Overrides, err = notifications.DecodeOverrides(channels); err != nil {
		return nil, err
	}
	if qs != "" && qe != "" {
		r.settings.QuietHours = &notifications.QuietHours{Start: qs, End: qe}
	}
	r.settings.UpdatedAt = fromNullMicros(updated)
	return &r, nil
}

// addNotification records n inside the transaction of the change that causes
// it, and in the same transaction queues its push and email work as the
// person's preferences say:
//
//   - in_app: the record is in the centre. With a collapse key, an unread
//     notification with the same key absorbs it (its title, body and data
//     become n's and its count grows); n.ID and n.Count then describe that
//     record. With in_app off the record is kept read and out of the
//     centre, only for the pushes and emails that refer to it.
//   - push: a job per registered device, due now or when the person's quiet
//     hours end. A collapsed notification whose push has not gone out yet
//     keeps that one job (it sends the latest text).
//   - email: one job when the record is new (not when it absorbs another,
//     so a busy conversation does not mail every message).
//
// A mute (registerMuteCheck) turns push and email off for n. Nothing is
// written for an account that is gone, or when no channel takes it (in-app
// off, and no push device or email address that a push or email could go to).
func addNotification(ctx context.Context, tx *sql.Tx, n *notify.Notification) error {
	return addNotifications(ctx, tx, []*notify.Notification{n})
}

// addNotifications is addNotification for several notifications at once
// (the other members of a group told of a message): their recipients
// (with whether they have push devices) and their mutes are read in one
// query each, not one per notification.
func addNotifications(ctx context.Context, tx *sql.Tx, ns []*notify.Notification) error {
	if len(ns) == 0 {
		return nil
	}
	ids := make([]any, len(ns))
	for i, n := range ns {
		ids[i] = n.UserID
	}
	rs, err := loadRecipients(ctx, tx, ids)
	if err != nil {
		return fmt.Errorf("store: notification settings: %w", err)
	}
	// Each live recipient's channels; a mute turns push and email off.
	var live []*notify.Notification
	var choices []notifications.Choice
	var loud []int // those a push or an email would reach, for the mute checks
	for _, n := range ns {
		if r := rs[n.UserID]; r != nil && !r.deleted {
			c := r.settings.Choice(n.Kind)
			if r.reaches(c) {
				loud = append(loud, len(live))
			}
			live, choices = append(live, n), append(choices, c)
		}
	}
	if len(loud) > 0 {
		asked := make([]*notify.Notification, len(loud))
		for i, k := range loud {
			asked[i] = live[k]
		}
		for _, check := range muteChecks {
			muted, err := check(ctx, tx, asked)
			if err != nil {
				return fmt.Errorf("store: notification mute: %w", err)
			}
			for i, k := range loud {
				if muted[i] {
					choices[k].Push, choices[k].Email = false, false
				}
			}
		}
	}
	// The records first, all in-app ones in one statement per chunk; then
	// each one's push and email jobs; then what the stream says of them.
	var inApp []*notify.Notification
	var inAppAt []int
	created := make([]bool, len(live))
	for i, n := range live {
		c := choices[i]
		switch {
		case c.InApp:
			inApp, inAppAt = append(inApp, n), append(inAppAt, i)
		case rs[n.UserID].reaches(c): // for the jobs that refer to it
			if err := insertQuietNotification(ctx, tx, n); err != nil {
				return err
			}
			created[i] = true
		}
	}
	made, err := upsertNotifications(ctx, tx, inApp)
	if err != nil {
		return err
	}
	for j, i := range inAppAt {
		created[i] = made[j]
	}
	for i, n := range live {
		if err := queueJobs(ctx, tx, n, rs[n.UserID], choices[i], created[i]); err != nil {
			return err
		}
	}
	if len(inApp) > 0 {
		for _, publish := range publishers {
			if err := publish(ctx, tx, inApp); err != nil {
				return fmt.Errorf("store: publish notification: %w", err)
			}
		}
	}
	return nil
}

// queueJobs queues the push and email work of n, just written for its
// recipient r (see addNotification); created says it is a new record.
func queueJobs(ctx context.Context, tx *sql.Tx, n *notify.Notification, r *recipient, choice notifications.Choice, created bool) error {
	if choice.Push && r.devices {
		runAt := n.UpdatedAt
		if until, quiet := r.settings.QuietHours.Until(n.UpdatedAt, notifications.Location(r.settings.Timezone)); quiet {
			runAt = until
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO notification_jobs (notification_id, user_id, channel, device_id, run_at, created_at)
			SELECT $1, $2, 'push', d.id, $3, $4 FROM push_devices d WHERE d.user_id = $2
			AND NOT EXISTS (SELECT 1 FROM notification_jobs j WHERE j.notification_id = $1 AND j.device_id = d.id AND j.sent_at IS NULL)`,
			n.ID, n.UserID, micros(runAt), micros(n.UpdatedAt)); err != nil {
			return fmt.Errorf("store: queue push: %w", err)
		}
	}
	if choice.Email && created && r.email != "" {
		if _, err := tx.ExecContext(ctx, `INSERT INTO notification_jobs (notification_id, user_id, channel, run_at, created_at)
			VALUES ($1, $2, 'email', $3, $3)`, n.ID, n.UserID, micros(n.UpdatedAt)); err != nil {
			return fmt.Errorf("store: queue email: %w", err)
		}
	}
	return nil
}

// insertQuietNotification records n with in-app off: kept read, so it
// never absorbs another and never counts as unread.
func insertQuietNotification(ctx context.Context, tx *sql.Tx, n *notify.Notification) error {
	data, err := json.Marshal(n.Data)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO notifications (id, user_id, kind, title, body, data, collapse_key, count, created_at, updated_at, read_at, in_app)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11)`,
		n.ID, n.UserID, n.Kind, n.Title, n.Body, string(data), n.CollapseKey, n.Count, micros(n.CreatedAt), micros(n.UpdatedAt), false)
	if err != nil {
		return fmt.Errorf("store: add notification: %w", err)
	}
	return nil
}

// upsertNotifications inserts the in-app notifications ns or folds each
// into the unread one with its collapse key, and says which are new. Each
// one that folded takes that record's id, count, creation and delivery
// times.
//
// One statement per chunk (a message to a group of 100 writes 99), so
// that two changes at once cannot both add a record with the same key:
// the second folds into the first. A chunk never holds two with the same
// recipient and key, since PostgreSQL refuses to update a row twice in one
// statement.
func upsertNotifications(ctx context.Context, tx *sql.Tx, ns []*notify.Notification) ([]bool, error) {
	created := make([]bool, len(ns))
	for start := 0; start < len(ns); {
		end := start
		keys := map[[2]string]bool{}
		for end < len(ns) && end-start < 500 {
			n := ns[end]
			if n.CollapseKey != "" {
				k := [2]string{n.UserID, n.CollapseKey}
				if keys[k] {
					break
				}
				keys[k] = true
			}
			end++
		}
		if err := upsertChunk(ctx, tx, ns[start:end], created[start:end]); err != nil {
			return nil, err
		}
		start = end
	}
	return created, nil
}

func upsertChunk(ctx context.Context, tx *sql.Tx, ns []*notify.Notification, created []bool) error {
	const cols = 10
	rows := make([]string, len(ns))
	args := make([]any, 0, cols*len(ns))
	byID := make(map[string]int, len(ns))
	byKey := make(map[[2]string]int, len(ns))
	for i, n := range ns {
		data, err := json.Marshal(n.Data)
		if err != nil {
			return err
		}
		rows[i] = "(" + placeholders(i*cols+1, cols) + ")"
		args = append(args, n.ID, n.UserID, n.Kind, n.Title, n.Body, string(data), n.CollapseKey, n.Count, micros(n.CreatedAt), micros(n.UpdatedAt))
		byID[n.ID] = i
		if n.CollapseKey != "" {
			byKey[[2]string{n.UserID, n.CollapseKey}] = i
		}
	}
	res, err := tx.QueryContext(ctx, `INSERT INTO notifications (id, user_id, kind, title, body, data, collapse_key, count, created_at, updated_at)
		VALUES `+strings.Join(rows, ", ")+`
		ON CONFLICT (user_id, collapse_key) WHERE read_at IS NULL AND collapse_key <> ''
		DO UPDATE SET title = excluded.title, body = excluded.body, data = excluded.data,
			count = notifications.count + 1, updated_at = excluded.updated_at
		RETURNING id, user_id, collapse_key, count, created_at, delivered_at`, args...)
	if err != nil {
		return fmt.Errorf("store: add notification: %w", err)
	}
	defer res.Close()
	seen := 0
	for res.Next() {
		var id, user, key string
		var count int
		var createdAt int64
		var delivered sql.NullInt64
		if err := res.Scan(&id, &user, &key, &count, &createdAt, &delivered); err != nil {
			return fmt.Errorf("store: add notification: %w", err)
		}
		// A new record has the id it was given; a folded one is found by
		// its recipient and key (unique in the chunk).
		i, isNew := byID[id]
		if !isNew {
			var ok bool
			if i, ok = byKey[[2]string{user, key}]; !ok {
				return fmt.Errorf("store: add notification: unexpected record %s", id)
			}
		}
		n := ns[i]
		created[i] = isNew
		n.ID, n.Count, n.CreatedAt, n.DeliveredAt = id, count, fromMicros(createdAt), fromNullMicros(delivered)
		seen++
	}
	if err := res.Err(); err != nil {
		return fmt.Errorf("store: add notification: %w", err)
	}
	if seen != len(ns) {
		return fmt.Errorf("store: add notification: %d records written for %d", seen, len(ns))
	}
	return nil
}

// verificationNotification tells the person their ID verification was
// decided (written in the review's transaction).
func verificationNotification(v *users.Verification) *notify.Notification {
	title := "Your ID is verified"
	if v.Status != users.VerificationApproved {
		title = "Your ID verification was not approved"
	}
	return notify.New(*v.ReviewedAt, v.UserID, notify.KindVerificationDecided, title, v.ReviewNote,
		map[string]string{"verification_id": v.ID, "status": v.Status})
}
