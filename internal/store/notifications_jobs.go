package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/notifications"
)

func init() {
	deleteRowsOf("notification_jobs", "user_id")
}

// The push and email queue. A job is due when run_at has passed and nobody
// holds a live lease on it. Claiming reads the due jobs with everything
// their sending needs (the notification, the device, the person's address
// and preferences) in one query; on PostgreSQL the rows are locked with
// SKIP LOCKED so nodes claim side by side, on SQLite the IMMEDIATE
// transaction holds the write lock and the conditional UPDATE is exact.

const notificationJobColumns = `j.seq, j.channel, j.attempts, j.sent_at IS NULL, j.created_at, n.in_app,
	` + notificationColumns + `,
	COALESCE(d.id, ''), COALESCE(d.platform, ''), COALESCE(d.token, ''), COALESCE(d.p256dh, ''), COALESCE(d.auth, ''), COALESCE(d.name, ''),
	COALESCE(u.email, ''), u.timezone, COALESCE(s.channels, ''), COALESCE(s.quiet_start, ''), COALESCE(s.quiet_end, '')`

// ClaimJobs leases due jobs, applying decide to each in the same
// transaction.
func (s *Notifications) ClaimJobs(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int,
	decide func(*notifications.Job) notifications.Plan) ([]*notifications.Job, error) {
	var out []*notifications.Job
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		q := `SELECT ` + notificationJobColumns + ` FROM notification_jobs j
			JOIN notifications n ON n.id = j.notification_id
			JOIN users u ON u.id = j.user_id
			LEFT JOIN push_devices d ON d.id = j.device_id
			LEFT JOIN notification_settings s ON s.user_id = j.user_id
			WHERE j.run_at <= $1 AND j.lease_until < $1 ORDER BY j.run_at, j.seq LIMIT $2`
		if s.db.Dialect == Postgres {
			q += ` FOR UPDATE OF j SKIP LOCKED`
		}
		rows, err := tx.QueryContext(ctx, q, micros(now), limit)
		if err != nil {
			return err
		}
		var jobs []*notifications.Job
		for rows.Next() {
			j, err := scanClaimed(rows)
			if err != nil {
				rows.Close()
				return err
			}
			jobs = append(jobs, j)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		var send, drop []any
		for _, j := range jobs {
			p := decide(j)
			switch p.Action {
			case notifications.Send:
				send = append(send, j.Seq)
				out = append(out, j)
				if err := appendEvent(ctx, tx, p.Event); err != nil {
					return err
				}
			case notifications.Wait:
				if _, err := tx.ExecContext(ctx, `UPDATE notification_jobs SET run_at = $2 WHERE seq = $1`, j.Seq, micros(p.Until)); err != nil {
					return err
				}
			default:
				drop = append(drop, j.Seq)
			}
		}
		if len(drop) > 0 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM notification_jobs WHERE seq IN (`+placeholders(1, len(drop))+`)`, drop...); err != nil {
				return err
			}
		}
		if len(send) > 0 {
			args := append([]any{owner, micros(now.Add(lease)), micros(now)}, send...)
			if _, err := tx.ExecContext(ctx, `UPDATE notification_jobs SET lease_owner = $1, lease_until = $2, sent_at = COALESCE(sent_at, $3)
				WHERE seq IN (`+placeholders(4, len(send))+`)`, args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim notification jobs: %w", err)
	}
	return out, nil
}

func scanClaimed(row scanner) (*notifications.Job, error) {
	var j notifications.Job
	var created int64
	var d notifications.Device
	var channels, qs, qe string
	var firstSend bool
	var data string
	var nCreated, nUpdated int64
	var read, delivered sql.NullInt64
	r := &j.Notification
	if err := row.Scan(&j.Seq, &j.Channel, &j.Attempts, &firstSend, &created, &j.InCentre,
		&r.ID, &r.UserID, &r.Kind, &r.Title, &r.Body, &data, &r.CollapseKey, &r.Count, &nCreated, &nUpdated, &read, &delivered,
		&d.ID, &d.Platform, &d.Token, &d.P256DH, &d.Auth, &d.Name,
		&j.Email, &j.Settings.Timezone, &channels, &qs, &qe); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(data), &r.Data); err != nil {
		return nil, fmt.Errorf("notification %s data: %w", r.ID, err)
	}
	r.CreatedAt, r.UpdatedAt, r.ReadAt, r.DeliveredAt = fromMicros(nCreated), fromMicros(nUpdated), fromNullMicros(read), fromNullMicros(delivered)
	j.FirstSend, j.CreatedAt = firstSend, fromMicros(created)
	if d.ID != "" {
		d.UserID = r.UserID
		j.Device = &d
	}
	var err error
	if j.Settings.Overrides, err = notifications.DecodeOverrides(channels); err != nil {
		return nil, err
	}
	if qs != "" && qe != "" {
		j.Settings.QuietHours = &notifications.QuietHours{Start: qs, End: qe}
	}
	return &j, nil
}

// FinishJobs records the outcomes in one transaction: the finished jobs
// are deleted together, and only those whose lease owner still held
// record their event (another node that took a lease over does the work
// and records it instead).
func (s *Notifications) FinishJobs(ctx context.Context, owner string, outcomes []notifications.Outcome) error {
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var finished []any
		var used []any
		byID := map[int64]*notifications.Outcome{}
		var at time.Time
		for i := range outcomes {
			o := &outcomes[i]
			switch o.Action {
			case notifications.Done, notifications.Drop:
				finished = append(finished, o.Seq)
				byID[o.Seq] = o
				if o.Action == notifications.Done && o.DeviceID != "" {
					used = append(used, o.DeviceID)
					at = o.At
				}
			case notifications.Retry:
				if _, err := tx.ExecContext(ctx, `UPDATE notification_jobs SET run_at = $3, attempts = attempts + 1, last_error = $4,
					lease_owner = '', lease_until = 0 WHERE seq = $1 AND lease_owner = $2`, o.Seq, owner, micros(o.Until), truncate(o.Error, 500)); err != nil {
					return err
				}
			case notifications.Gone:
				// Removing the device removes every job queued for it.
				if _, err := tx.ExecContext(ctx, `DELETE FROM push_devices WHERE id = $1`, o.DeviceID); err != nil {
					return err
				}
			}
		}
		if len(finished) > 0 {
			rows, err := tx.QueryContext(ctx, `DELETE FROM notification_jobs WHERE lease_owner = $1 AND seq IN (`+placeholders(2, len(finished))+`)
				RETURNING seq`, append([]any{owner}, finished...)...)
			if err != nil {
				return err
			}
			var held []int64
			for rows.Next() {
				var seq int64
				if err := rows.Scan(&seq); err != nil {
					rows.Close()
					return err
				}
				held = append(held, seq)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			slices.Sort(held) // events in the order the jobs were queued
			for _, seq := range held {
				if o := byID[seq]; o.Action == notifications.Done {
					if err := appendEvent(ctx, tx, o.Event); err != nil {
						return err
					}
				}
			}
		}
		if len(used) > 0 {
			if _, err := tx.ExecContext(ctx, `UPDATE push_devices SET last_used_at = $1 WHERE id IN (`+placeholders(2, len(used))+`)`,
				append([]any{micros(at)}, used...)...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: finish notification jobs: %w", err)
	}
	return nil
}

// ReleaseJobs hands owner's leases back.
func (s *Notifications) ReleaseJobs(ctx context.Context, owner string) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE notification_jobs SET lease_owner = '', lease_until = 0 WHERE lease_owner = $1`, owner); err != nil {
		return fmt.Errorf("store: release notification jobs: %w", err)
	}
	return nil
}

// PendingJobs counts queued jobs of a channel ("" for all): a metric and a
// test aid.
func (s *Notifications) PendingJobs(ctx context.Context, channel string) (int64, error) {
	var n int64
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM notification_jobs WHERE $1 = '' OR channel = $1`, channel).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count notification jobs: %w", err)
	}
	return n, nil
}

// truncate cuts s to n bytes at most (an error text kept for operators).
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
