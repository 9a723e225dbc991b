package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/webhooks"
)

// Webhooks implements webhooks.Store.
type Webhooks struct{ db *DB }

// NewWebhooks returns the webhooks store over db.
func NewWebhooks(db *DB) *Webhooks { return &Webhooks{db: db} }

var _ webhooks.Store = (*Webhooks)(nil)

func init() {
	// Deliveries and attempts go with their subscription (ON DELETE CASCADE).
	deleteRowsOf("webhook_subscriptions", "user_id")
}

// writers serialises the webhook worker's write transactions per SQLite
// database in Go. SQLite has one write lock, and a transaction that finds
// it taken sleeps in growing steps (up to 100 ms) before it tries again:
// the fan-out, claim and result writers of a busy node would spend most of
// their time asleep. PostgreSQL needs none of this.
var writers sync.Map // *DB -> *sync.Mutex

func (w *Webhooks) serial() func() {
	if w.db.Dialect != SQLite {
		return func() {}
	}
	m, _ := writers.LoadOrStore(w.db, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// A subscription is read with what delivery rules need of its credential:
// whether it still works, and the tier of the account paying for it.
const subColumns = `s.id, s.user_id, COALESCE(s.api_key_id, ''), COALESCE(s.grant_id, ''), COALESCE(s.client_id, ''), s.scopes,
	s.admin, s.transport, s.url, s.events, s.description, s.status, s.disabled_reason, s.secret_enc, s.old_secret_enc,
	s.old_secret_until, s.verify_due_at, s.verified_at, s.verify_attempted_at, s.verify_status_code, s.verify_error,
	s.verify_response, s.failing_since, s.last_seen_at, s.created_at, s.updated_at,
	u.deleted_at, u.tier, k.revoked_at, g.revoked_at, c.revoked_at, o.tier, o.role`

const subJoins = ` JOIN users u ON u.id = s.user_id
	LEFT JOIN api_keys k ON k.id = s.api_key_id
	LEFT JOIN oauth_grants g ON g.id = s.grant_id
	LEFT JOIN oauth_clients c ON c.id = s.client_id
	LEFT JOIN users o ON o.id = c.owner_id`

func scanSub(row scanner, extra ...any) (*webhooks.Subscription, error) {
	var s webhooks.Subscription
	var scopes, events string
	var oldUntil, created, updated int64
	var due, verified, attempted, failing, seen, userDeleted, keyRevoked, grantRevoked, clientRevoked sql.NullInt64
	var vstatus sql.NullInt64
	var verr, vresp string
	var ownerTier, ownerRole sql.NullString
	dest := append([]any{&s.ID, &s.UserID, &s.APIKeyID, &s.GrantID, &s.ClientID, &scopes, &s.Admin, &s.Transport, &s.URL, &events,
		&s.Description, &s.Status, &s.DisabledReason, &s.SecretEnc, &s.OldSecretEnc, &oldUntil, &due, &verified, &attempted,
		&vstatus, &verr, &vresp, &failing, &seen, &created, &updated,
		&userDeleted, &s.Tier, &keyRevoked, &grantRevoked, &clientRevoked, &ownerTier, &ownerRole}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	s.Scopes, s.Events = strings.Fields(scopes), strings.Fields(events)
	s.OldSecretUntil, s.CreatedAt, s.UpdatedAt = fromMicros(oldUntil), fromMicros(created), fromMicros(updated)
	s.VerifyDueAt, s.VerifiedAt, s.FailingSince, s.LastSeenAt = fromNullMicros(due), fromNullMicros(verified), fromNullMicros(failing), fromNullMicros(seen)
	if attempted.Valid {
		s.Verification = &webhooks.Verification{At: fromMicros(attempted.Int64), StatusCode: int(vstatus.Int64), Error: verr, Response: vresp}
	}
	switch {
	case userDeleted.Valid:
		s.CredentialLive = false
	case s.APIKeyID != "":
		s.CredentialLive = !keyRevoked.Valid
	default:
		s.CredentialLive = s.GrantID != "" && !grantRevoked.Valid && !clientRevoked.Valid
		// A third-party client's owner pays; the service's own clients act
		// on the user's account.
		if ownerRole.String != auth.RoleSystem && ownerTier.Valid {
			s.Tier = ownerTier.String
		}
	}
	return &s, nil
}

func (w *Webhooks) subs(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, where string, args ...any) ([]*webhooks.Subscription, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+subColumns+` FROM webhook_subscriptions s`+subJoins+` WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("store: read webhooks: %w", err)
	}
	defer rows.Close()
	var out []*webhooks.Subscription
	for rows.Next() {
		s, err := scanSub(rows)
		if err != nil {
			return nil, fmt.Errorf("store: read webhooks: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// CreateSubscription stores a new subscription.
func (w *Webhooks) CreateSubscription(ctx context.Context, s *webhooks.Subscription) error {
	_, err := w.db.ExecContext(ctx, `INSERT INTO webhook_subscriptions (id, user_id, api_key_id, grant_id, client_id, scopes, admin,
		transport, url, events, description, status, secret_enc, verify_due_at, last_seen_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
		s.ID, s.UserID, nullString(s.APIKeyID), nullString(s.GrantID), nullString(s.ClientID), auth.FormatScopes(s.Scopes), s.Admin,
		s.Transport, s.URL, strings.Join(s.Events, " "), s.Description, s.Status, s.SecretEnc, nullMicros(s.VerifyDueAt),
		nullMicros(s.LastSeenAt), micros(s.CreatedAt), micros(s.UpdatedAt))
	if err != nil {
		return fmt.Errorf("store: create webhook: %w", err)
	}
	return nil
}

// Subscription returns one subscription.
func (w *Webhooks) Subscription(ctx context.Context, id string) (*webhooks.Subscription, error) {
	ss, err := w.subs(ctx, w.db, `s.id = $1`, id)
	if err != nil {
		return nil, err
	}
	if len(ss) == 0 {
		return nil, apperr.NotFoundf("no webhook %q", id)
	}
	return ss[0], nil
}

// ListSubscriptions pages through an account's subscriptions by id, only
// those made by clientID when it is set.
func (w *Webhooks) ListSubscriptions(ctx context.Context, userID, clientID, after string, limit int) ([]*webhooks.Subscription, error) {
	if clientID != "" {
		return w.subs(ctx, w.db, `s.user_id = $1 AND s.id > $2 AND s.client_id = $3 ORDER BY s.id LIMIT $4`, userID, after, clientID, limit)
	}
	return w.subs(ctx, w.db, `s.user_id = $1 AND s.id > $2 ORDER BY s.id LIMIT $3`, userID, after, limit)
}

// CountSubscriptions counts an account's subscriptions.
func (w *Webhooks) CountSubscriptions(ctx context.Context, userID string) (int, error) {
	var n int
	if err := w.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM webhook_subscriptions WHERE user_id = $1`, userID).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count webhooks: %w", err)
	}
	return n, nil
}

// ModifySubscription changes a subscription under a row lock.
func (w *Webhooks) ModifySubscription(ctx context.Context, id string, fn func(s *webhooks.Subscription) error) (*webhooks.Subscription, error) {
	var out *webhooks.Subscription
	err := w.db.Tx(ctx, func(tx *sql.Tx) error {
		lock := ""
		if w.db.Dialect == Postgres {
			lock = " FOR UPDATE OF s"
		}
		ss, err := w.subs(ctx, tx, `s.id = $1`+lock, id)
		if err != nil {
			return err
		}
		if len(ss) == 0 {
			return apperr.NotFoundf("no webhook %q", id)
		}
		s := ss[0]
		if err := fn(s); err != nil {
			return err
		}
		var vat, vstatus sql.NullInt64
		var verr, vresp string
		if v := s.Verification; v != nil {
			vat = sql.NullInt64{Int64: micros(v.At), Valid: true}
			vstatus = sql.NullInt64{Int64: int64(v.StatusCode), Valid: v.StatusCode != 0}
			verr, vresp = v.Error, v.Response
		}
		_, err = tx.ExecContext(ctx, `UPDATE webhook_subscriptions SET url = $2, events = $3, description = $4, status = $5,
			disabled_reason = $6, secret_enc = $7, old_secret_enc = $8, old_secret_until = $9, verify_due_at = $10, verified_at = $11,
			verify_attempted_at = $12, verify_status_code = $13, verify_error = $14, verify_response = $15, failing_since = $16,
			updated_at = $17 WHERE id = $1`,
			s.ID, s.URL, strings.Join(s.Events, " "), s.Description, s.Status, s.DisabledReason, s.SecretEnc, s.OldSecretEnc,
			micros(s.OldSecretUntil), nullMicros(s.VerifyDueAt), nullMicros(s.VerifiedAt), vat, vstatus, verr, vresp,
			nullMicros(s.FailingSince), micros(s.UpdatedAt))
		if err != nil {
			return fmt.Errorf("store: update webhook: %w", err)
		}
		out = s
		return nil
	})
	return out, err
}

// DeleteSubscription deletes a subscription, its deliveries and attempts.
func (w *Webhooks) DeleteSubscription(ctx context.Context, id string) error {
	if _, err := w.db.ExecContext(ctx, `DELETE FROM webhook_subscriptions WHERE id = $1`, id); err != nil {
		return fmt.Errorf("store: delete webhook: %w", err)
	}
	return nil
}

// ClaimEvents leases outbox events of the webhooks consumer.
func (w *Webhooks) ClaimEvents(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]webhooks.Claimed, error) {
	defer w.serial()()
	cs, err := NewOutbox(w.db).Claim(ctx, outbox.ConsumerWebhooks, owner, now, lease, limit)
	if err != nil {
		return nil, err
	}
	out := make([]webhooks.Claimed, len(cs))
	for i, c := range cs {
		out[i] = webhooks.Claimed{Seq: c.Seq, Event: c.Event}
	}
	return out, nil
}

// ReleaseEvents hands the owner's outbox leases back.
func (w *Webhooks) ReleaseEvents(ctx context.Context, owner string) error {
	return NewOutbox(w.db).Release(ctx, outbox.ConsumerWebhooks, owner)
}

// Targets returns the deliverable subscriptions of the accounts in userIDs
// and every admin one (the worker applies the rules to each event).
func (w *Webhooks) Targets(ctx context.Context, userIDs []string) ([]*webhooks.Subscription, error) {
	where := `(s.status IN ('active', 'failing') OR (s.status = 'disabled' AND s.disabled_reason = 'paused')) AND (s.admin`
	args := make([]any, len(userIDs))
	for i, u := range userIDs {
		args[i] = u
	}
	if len(userIDs) > 0 {
		where += ` OR s.user_id IN (` + placeholders(1, len(userIDs)) + `)`
	}
	return w.subs(ctx, w.db, where+`)`, args...)
}

// FanOut writes the deliveries of a batch of claimed events and finishes
// the events, in one transaction.
func (w *Webhooks) FanOut(ctx context.Context, owner string, seqs []int64, ds []*webhooks.Delivery) error {
	ins, err := w.bulk(ctx, `INSERT INTO webhook_deliveries (id, subscription_id, event_seq, event_id, event_type, status,
		next_attempt_at, created_at, lease_owner, lease_until) VALUES `, 10, "")
	if err != nil {
		return err
	}
	done, err := w.prepareIn(ctx, `DELETE FROM outbox_pending WHERE consumer = $1 AND lease_owner = $2 AND seq IN `, 2, "")
	if err != nil {
		return err
	}
	rows := make([][]any, len(ds))
	for i, d := range ds {
		leaseOwner, leaseUntil := "", int64(0)
		if !d.LeaseUntil.IsZero() {
			leaseOwner, leaseUntil = owner, micros(d.LeaseUntil)
		}
		rows[i] = []any{d.ID, d.SubscriptionID, d.EventSeq, d.EventID, d.EventType, d.Status, micros(d.NextAttemptAt),
			micros(d.CreatedAt), leaseOwner, leaseUntil}
	}
	keys := make([]any, len(seqs))
	for i, s := range seqs {
		keys[i] = s
	}
	defer w.serial()()
	err = w.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := ins.exec(ctx, tx, rows); err != nil {
			return fmt.Errorf("store: write deliveries: %w", err)
		}
		// outboxDone for the whole batch: every event must still be leased
		// to owner, or another node took the batch over.
		n, err := done.exec(ctx, tx, []any{outbox.ConsumerWebhooks, owner}, keys)
		if err != nil {
			return fmt.Errorf("store: finish outbox events: %w", err)
		}
		if n != int64(len(keys)) {
			return ErrLeaseLost
		}
		return nil
	})
	if errors.Is(err, ErrLeaseLost) {
		return webhooks.ErrLeaseLost
	}
	return err
}

// Writes of many rows go through statements of a fixed shape, prepared once
// per process (outside any transaction, so preparing never waits for a
// pooled connection) and bound to each transaction: SQLite parses them once
// rather than per row, and PostgreSQL gets one round trip per chunk.
const chunk = 64

// bulkStmts inserts rows chunk at a time, and the rest one by one.
type bulkStmts struct {
	full, one *sql.Stmt
	cols      int
}

func valuesList(rows, cols int) string {
	var b strings.Builder
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(" + placeholders(i*cols+1, cols) + ")")
	}
	return b.String()
}

func (w *Webhooks) bulk(ctx context.Context, prefix string, cols int, suffix string) (*bulkStmts, error) {
	full, err := w.db.prepared(ctx, prefix+valuesList(chunk, cols)+suffix)
	if err != nil {
		return nil, err
	}
	one, err := w.db.prepared(ctx, prefix+valuesList(1, cols)+suffix)
	if err != nil {
		return nil, err
	}
	return &bulkStmts{full: full, one: one, cols: cols}, nil
}

func (b *bulkStmts) exec(ctx context.Context, tx *sql.Tx, rows [][]any) error {
	i := 0
	if len(rows) >= chunk {
		full := tx.StmtContext(ctx, b.full)
		args := make([]any, 0, chunk*b.cols)
		for ; i+chunk <= len(rows); i += chunk {
			args = args[:0]
			for _, r := range rows[i : i+chunk] {
				args = append(args, r...)
			}
			if _, err := full.ExecContext(ctx, args...); err != nil {
				return err
			}
		}
	}
	if i < len(rows) {
		one := tx.StmtContext(ctx, b.one)
		for ; i < len(rows); i++ {
			if _, err := one.ExecContext(ctx, rows[i]...); err != nil {
				return err
			}
		}
	}
	return nil
}

// inStmt runs a statement ending in "IN (...)" over any number of keys, a
// chunk at a time; a short chunk repeats its last key (IN ignores repeats).
type inStmt struct {
	st        *sql.Stmt
	returning bool
}

func (w *Webhooks) prepareIn(ctx context.Context, prefix string, fixed int, suffix string) (*inStmt, error) {
	st, err := w.db.prepared(ctx, prefix+"("+placeholders(fixed+1, chunk)+")"+suffix)
	if err != nil {
		return nil, err
	}
	return &inStmt{st: st, returning: suffix != ""}, nil
}

// exec returns the rows affected.
func (in *inStmt) exec(ctx context.Context, tx *sql.Tx, fixed, keys []any) (int64, error) {
	st := tx.StmtContext(ctx, in.st)
	var total int64
	for i := 0; i < len(keys); i += chunk {
		args := append(append(make([]any, 0, len(fixed)+chunk), fixed...), keys[i:min(i+chunk, len(keys))]...)
		for len(args) < len(fixed)+chunk {
			args = append(args, args[len(args)-1])
		}
		res, err := st.ExecContext(ctx, args...)
		if err != nil {
			return 0, err
		}
		n, _ := res.RowsAffected()
		total += n
	}
	return total, nil
}

// query is exec for a statement with RETURNING id: it returns the ids.
func (in *inStmt) query(ctx context.Context, tx *sql.Tx, fixed []any, keys []string) ([]string, error) {
	st := tx.StmtContext(ctx, in.st)
	var out []string
	for i := 0; i < len(keys); i += chunk {
		args := append(make([]any, 0, len(fixed)+chunk), fixed...)
		for _, k := range keys[i:min(i+chunk, len(keys))] {
			args = append(args, k)
		}
		for len(args) < len(fixed)+chunk {
			args = append(args, args[len(args)-1])
		}
		rows, err := st.QueryContext(ctx, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, err
			}
			out = append(out, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

const deliveryJobColumns = `, d.id, d.subscription_id, COALESCE(d.event_seq, 0), d.event_id, d.event_type, COALESCE(d.payload, e.payload, ''),
	d.status, d.manual, d.test, d.attempts, d.next_attempt_at, d.created_at, COALESCE(e.audience, '')`

// jobs loads claimed deliveries with their subscription and event.
func (w *Webhooks) jobs(ctx context.Context, ids []any) ([]*webhooks.Job, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := w.db.QueryContext(ctx, `SELECT `+subColumns+deliveryJobColumns+` FROM webhook_deliveries d
		JOIN webhook_subscriptions s ON s.id = d.subscription_id`+subJoins+`
		LEFT JOIN outbox_events e ON e.seq = d.event_seq
		WHERE d.id IN (`+placeholders(1, len(ids))+`) ORDER BY d.next_attempt_at, d.id`, ids...)
	if err != nil {
		return nil, fmt.Errorf("store: read deliveries: %w", err)
	}
	defer rows.Close()
	var out []*webhooks.Job
	for rows.Next() {
		var j webhooks.Job
		d := &j.Delivery
		var body, audience string
		var next, created int64
		s, err := scanSub(rows, &d.ID, &d.SubscriptionID, &d.EventSeq, &d.EventID, &d.EventType, &body, &d.Status,
			&d.Manual, &d.Test, &d.Attempts, &next, &created, &audience)
		if err != nil {
			return nil, fmt.Errorf("store: read deliveries: %w", err)
		}
		d.NextAttemptAt, d.CreatedAt = fromMicros(next), fromMicros(created)
		j.Sub, j.Body, j.Audience = *s, []byte(body), strings.Fields(audience)
		if d.Test {
			d.Payload = j.Body
		}
		out = append(out, &j)
	}
	return out, rows.Err()
}

// claimIDs runs a leasing UPDATE ... RETURNING id and loads the jobs.
func (w *Webhooks) claimIDs(ctx context.Context, query string, args ...any) ([]*webhooks.Job, error) {
	var ids []any
	st, err := w.db.prepared(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("store: claim deliveries: %w", err)
	}
	unlock := w.serial()
	err = w.db.Tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.StmtContext(ctx, st).QueryContext(ctx, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
	unlock()
	if err != nil {
		return nil, fmt.Errorf("store: claim deliveries: %w", err)
	}
	return w.jobs(ctx, ids)
}

func (w *Webhooks) skipLocked() string {
	if w.db.Dialect == Postgres {
		return ` FOR UPDATE OF d SKIP LOCKED`
	}
	return ""
}

// ClaimDeliveries leases due deliveries of endpoints that may receive them
// (and manual retries of endpoints disabled for failing), oldest due first,
// skipping the subscriptions in skip.
func (w *Webhooks) ClaimDeliveries(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int, skip []string) ([]*webhooks.Job, error) {
	args := []any{owner, micros(now.Add(lease)), micros(now), limit}
	not := ""
	if len(skip) > 0 {
		not = ` AND d.subscription_id NOT IN (` + placeholders(5, len(skip)) + `)`
		for _, s := range skip {
			args = append(args, s)
		}
	}
	return w.claimIDs(ctx, `UPDATE webhook_deliveries SET lease_owner = $1, lease_until = $2 WHERE id IN (
		SELECT d.id FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
		WHERE d.status = 'pending' AND d.next_attempt_at <= $3 AND d.lease_until < $3 AND s.transport = 'https'
		AND (s.status IN ('active', 'failing') OR (d.manual AND s.status = 'disabled' AND s.disabled_reason IN ('failing', 'gone')))`+
		not+` ORDER BY d.next_attempt_at LIMIT $4`+w.skipLocked()+`) RETURNING id`, args...)
}

// ClaimStream leases a stream subscription's pending deliveries.
func (w *Webhooks) ClaimStream(ctx context.Context, subID, owner string, now time.Time, lease time.Duration, limit int) ([]*webhooks.Job, error) {
	return w.claimIDs(ctx, `UPDATE webhook_deliveries SET lease_owner = $1, lease_until = $2 WHERE id IN (
		SELECT d.id FROM webhook_deliveries d WHERE d.subscription_id = $5 AND d.status = 'pending' AND d.lease_until < $3
		ORDER BY d.id LIMIT $4`+w.skipLocked()+`) RETURNING id`, owner, micros(now.Add(lease)), micros(now), limit, subID)
}

// ExtendLeases renews every lease the owner holds.
func (w *Webhooks) ExtendLeases(ctx context.Context, owner string, until time.Time) error {
	defer w.serial()()
	_, err := w.db.ExecContext(ctx, `UPDATE webhook_deliveries SET lease_until = $2 WHERE lease_owner = $1 AND status = 'pending'`, owner, micros(until))
	if err != nil {
		return fmt.Errorf("store: renew delivery leases: %w", err)
	}
	return nil
}

// ReleaseDeliveries hands the owner's leases back.
func (w *Webhooks) ReleaseDeliveries(ctx context.Context, owner string) error {
	defer w.serial()()
	_, err := w.db.ExecContext(ctx, `UPDATE webhook_deliveries SET lease_owner = '', lease_until = 0 WHERE lease_owner = $1`, owner)
	if err != nil {
		return fmt.Errorf("store: release delivery leases: %w", err)
	}
	return nil
}

// RecordOutcomes writes attempts, delivery states and subscription
// transitions of a batch in one transaction. An outcome whose lease another
// node took over is skipped: that node attempts it. A subscription that
// becomes failing gets its webhook.failing event and its owner's
// notification in the same transaction; the returned list is for email.
// Outcomes with the same result (most often: first attempts answered 200)
// share their UPDATE statements.
func (w *Webhooks) RecordOutcomes(ctx context.Context, now time.Time, os []*webhooks.Outcome) ([]webhooks.Failing, error) {
	const set = `UPDATE webhook_deliveries SET status = $1, attempts = $2, next_attempt_at = $3, last_status_code = $4,
		last_error = $5, completed_at = $6, manual = $7, lease_owner = '', lease_until = 0 WHERE `
	owned, err := w.prepareIn(ctx, set+`lease_owner = $8 AND id IN `, 8, ` RETURNING id`)
	if err != nil {
		return nil, err
	}
	// A stream's acknowledgement may reach any node: it needs no lease.
	acked, err := w.prepareIn(ctx, set+`status = 'pending' AND id IN `, 7, ` RETURNING id`)
	if err != nil {
		return nil, err
	}
	ins, err := w.bulk(ctx, `INSERT INTO webhook_attempts (delivery_id, number, subscription_id, started_at, duration_us,
		ok, status_code, error, response, next_retry_at, node) VALUES `, 11, ` ON CONFLICT (delivery_id, number) DO NOTHING`)
	if err != nil {
		return nil, err
	}
	type key struct {
		owner, status, errText string
		number, code           int
		next                   int64
		manual                 bool
	}
	var order []key
	groups := map[key][]*webhooks.Outcome{}
	for _, o := range os {
		d, a := &o.Job.Delivery, &o.Attempt
		k := key{owner: o.Owner, status: o.Final, errText: a.Error, number: a.Number, code: a.StatusCode, next: micros(d.NextAttemptAt)}
		if k.status == "" {
			k.status = webhooks.DeliveryPending
			if a.NextRetryAt != nil {
				k.next = micros(*a.NextRetryAt)
			}
		}
		k.manual = k.status == webhooks.DeliveryPending && d.Manual
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], o)
	}
	defer w.serial()()
	var failing []webhooks.Failing
	err = w.db.Tx(ctx, func(tx *sql.Tx) error {
		failing = failing[:0]
		var recorded []*webhooks.Outcome
		for _, k := range order {
			g := groups[k]
			completed := sql.NullInt64{}
			if k.status != webhooks.DeliveryPending {
				completed = sql.NullInt64{Int64: micros(now), Valid: true}
			}
			fixed := []any{k.status, k.number, k.next, sql.NullInt64{Int64: int64(k.code), Valid: k.code != 0}, k.errText, completed, k.manual}
			st := acked
			if k.owner != "" {
				st, fixed = owned, append(fixed, k.owner)
			}
			ids := make([]string, len(g))
			byID := map[string]*webhooks.Outcome{}
			for i, o := range g {
				ids[i], byID[o.Job.Delivery.ID] = o.Job.Delivery.ID, o
			}
			got, err := st.query(ctx, tx, fixed, ids)
			if err != nil {
				return err
			}
			for _, id := range got {
				if o := byID[id]; o != nil {
					recorded = append(recorded, o)
					delete(byID, id)
				}
			}
		}
		rows := make([][]any, len(recorded))
		for i, o := range recorded {
			a := &o.Attempt
			rows[i] = []any{o.Job.Delivery.ID, a.Number, o.Job.Delivery.SubscriptionID, micros(a.StartedAt), a.Duration.Microseconds(),
				a.OK, sql.NullInt64{Int64: int64(a.StatusCode), Valid: a.StatusCode != 0}, a.Error, a.Response, nullMicros(a.NextRetryAt), a.Node}
		}
		if err := ins.exec(ctx, tx, rows); err != nil {
			return err
		}
		for _, o := range recorded {
			if !o.Reactivate && !o.StartClock && o.Disable == "" && !o.StartFailing {
				continue
			}
			f, err := w.transitions(ctx, tx, now, o)
			if err != nil {
				return err
			}
			if f != nil {
				failing = append(failing, *f)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: record delivery outcomes: %w", err)
	}
	return failing, nil
}

// transitions applies what an outcome does to its subscription.
func (w *Webhooks) transitions(ctx context.Context, tx *sql.Tx, now time.Time, o *webhooks.Outcome) (*webhooks.Failing, error) {
	sub, at := &o.Job.Sub, micros(now)
	if o.Reactivate {
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_subscriptions SET
			status = CASE WHEN status = 'failing' OR (status = 'disabled' AND disabled_reason IN ('failing', 'gone')) THEN 'active' ELSE status END,
			disabled_reason = CASE WHEN status = 'disabled' AND disabled_reason IN ('failing', 'gone') THEN '' ELSE disabled_reason END,
			failing_since = NULL, updated_at = $2 WHERE id = $1`, sub.ID, at); err != nil {
			return nil, err
		}
	}
	if o.StartClock {
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_subscriptions SET failing_since = $2 WHERE id = $1 AND failing_since IS NULL`,
			sub.ID, micros(o.Attempt.StartedAt)); err != nil {
			return nil, err
		}
	}
	if o.Disable != "" {
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_subscriptions SET status = 'disabled', disabled_reason = $2, updated_at = $3
			WHERE id = $1 AND status IN ('active', 'failing')`, sub.ID, o.Disable, at); err != nil {
			return nil, err
		}
	}
	if !o.StartFailing {
		return nil, nil
	}
	res, err := tx.ExecContext(ctx, `UPDATE webhook_subscriptions SET status = 'failing', updated_at = $2 WHERE id = $1 AND status = 'active'`, sub.ID, at)
	if err != nil {
		return nil, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, nil
	}
	ev, err := webhooks.FailingEvent(now, sub, o.Job.Delivery.ID, o.Attempt.Error)
	if err != nil {
		return nil, err
	}
	if err := appendEvent(ctx, tx, &ev); err != nil {
		return nil, err
	}
	n := notify.New(now, sub.UserID, notify.KindWebhookFailing, "A webhook endpoint is failing",
		"Deliveries to "+sub.URL+" failed after every retry.", map[string]string{"webhook_id": sub.ID})
	n.CollapseKey = notify.KindWebhookFailing + ":" + sub.ID
	if err := addNotification(ctx, tx, n); err != nil {
		return nil, err
	}
	return &webhooks.Failing{SubscriptionID: sub.ID, UserID: sub.UserID, URL: sub.URL, LastError: o.Attempt.Error}, nil
}

// LeaseDelivery leases one delivery for a manual retry.
func (w *Webhooks) LeaseDelivery(ctx context.Context, subID, id, owner string, now time.Time, lease time.Duration) (*webhooks.Job, error) {
	defer w.serial()()
	res, err := w.db.ExecContext(ctx, `UPDATE webhook_deliveries SET lease_owner = $3, lease_until = $4
		WHERE id = $1 AND subscription_id = $2 AND lease_until < $5`, id, subID, owner, micros(now.Add(lease)), micros(now))
	if err != nil {
		return nil, fmt.Errorf("store: lease delivery: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		var one int
		err := w.db.QueryRowContext(ctx, `SELECT 1 FROM webhook_deliveries WHERE id = $1 AND subscription_id = $2`, id, subID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, apperr.NotFoundf("no delivery %q", id)
		}
		if err != nil {
			return nil, fmt.Errorf("store: lease delivery: %w", err)
		}
		return nil, apperr.Conflictf("delivery_in_progress", "", "the delivery is being attempted right now; look at it again in a few seconds")
	}
	js, err := w.jobs(ctx, []any{id})
	if err != nil {
		return nil, err
	}
	if len(js) == 0 {
		return nil, apperr.NotFoundf("no delivery %q", id)
	}
	return js[0], nil
}

// AddTestDelivery stores a test delivery, leased to owner until until (an
// empty owner leaves it for a stream to pick up).
func (w *Webhooks) AddTestDelivery(ctx context.Context, d *webhooks.Delivery, owner string, until time.Time) error {
	defer w.serial()()
	leaseUntil := int64(0)
	if owner != "" {
		leaseUntil = micros(until)
	}
	_, err := w.db.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, subscription_id, event_id, event_type, payload, status, test,
		next_attempt_at, lease_owner, lease_until, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		d.ID, d.SubscriptionID, d.EventID, d.EventType, string(d.Payload), d.Status, true, micros(d.NextAttemptAt), owner, leaseUntil,
		micros(d.CreatedAt))
	if err != nil {
		return fmt.Errorf("store: add test delivery: %w", err)
	}
	return nil
}

// TakeVerifications takes the subscriptions whose automatic challenge is
// due, each by one node (its due time is cleared as it is taken).
func (w *Webhooks) TakeVerifications(ctx context.Context, now time.Time, limit int) ([]*webhooks.Subscription, error) {
	lock := ""
	if w.db.Dialect == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var ids []any
	unlock := w.serial()
	err := w.db.Tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `UPDATE webhook_subscriptions SET verify_due_at = NULL WHERE id IN (
			SELECT id FROM webhook_subscriptions WHERE verify_due_at IS NOT NULL AND verify_due_at <= $1
			AND status = 'pending_verification' AND transport = 'https' ORDER BY verify_due_at LIMIT $2`+lock+`) RETURNING id`,
			micros(now), limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
	unlock()
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	return w.subs(ctx, w.db, `s.id IN (`+placeholders(1, len(ids))+`)`, ids...)
}

// RecordVerification stores a challenge's outcome, and activates the
// subscription when it succeeded and the url is still the one challenged.
func (w *Webhooks) RecordVerification(ctx context.Context, id, url string, v *webhooks.Verification, verified bool) (*webhooks.Subscription, error) {
	code := sql.NullInt64{Int64: int64(v.StatusCode), Valid: v.StatusCode != 0}
	_, err := w.db.ExecContext(ctx, `UPDATE webhook_subscriptions SET verify_attempted_at = $3, verify_status_code = $4,
		verify_error = $5, verify_response = $6,
		verified_at = CASE WHEN $7 THEN $3 ELSE verified_at END,
		status = CASE WHEN $7 AND status = 'pending_verification' THEN 'active' ELSE status END,
		updated_at = $3 WHERE id = $1 AND url = $2`, id, url, micros(v.At), code, v.Error, v.Response, verified)
	if err != nil {
		return nil, fmt.Errorf("store: record verification: %w", err)
	}
	return w.Subscription(ctx, id)
}

const deliveryColumns = `d.id, d.subscription_id, COALESCE(d.event_seq, 0), d.event_id, d.event_type, d.status, d.manual, d.test,
	d.attempts, d.next_attempt_at, d.last_status_code, d.last_error, d.created_at, d.completed_at`

func scanDelivery(row scanner) (*webhooks.Delivery, error) {
	var d webhooks.Delivery
	var next, created int64
	var code, completed sql.NullInt64
	if err := row.Scan(&d.ID, &d.SubscriptionID, &d.EventSeq, &d.EventID, &d.EventType, &d.Status, &d.Manual, &d.Test,
		&d.Attempts, &next, &code, &d.LastError, &created, &completed); err != nil {
		return nil, err
	}
	d.NextAttemptAt, d.CreatedAt, d.CompletedAt, d.LastStatusCode = fromMicros(next), fromMicros(created), fromNullMicros(completed), int(code.Int64)
	return &d, nil
}

// ListDeliveries pages through a subscription's deliveries, newest first,
// each with its attempts.
func (w *Webhooks) ListDeliveries(ctx context.Context, subID string, f webhooks.DeliveryFilter, before string, limit int) ([]*webhooks.Delivery, error) {
	where, args := []string{`d.subscription_id = $1`}, []any{subID}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if f.Status != "" {
		add(`d.status = $%d`, f.Status)
	}
	if f.EventType != "" {
		add(`d.event_type = $%d`, f.EventType)
	}
	if f.Since != nil {
		add(`d.created_at >= $%d`, micros(*f.Since))
	}
	if f.Until != nil {
		add(`d.created_at < $%d`, micros(*f.Until))
	}
	if before != "" {
		add(`d.id < $%d`, before)
	}
	args = append(args, limit)
	rows, err := w.db.QueryContext(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries d WHERE `+strings.Join(where, " AND ")+
		fmt.Sprintf(` ORDER BY d.id DESC LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("store: list deliveries: %w", err)
	}
	var out []*webhooks.Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: list deliveries: %w", err)
		}
		out = append(out, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, w.attachAttempts(ctx, out)
}

// maxAttemptsShown bounds the attempts read per delivery (manual retries
// could add any number).
const maxAttemptsShown = 25

func (w *Webhooks) attachAttempts(ctx context.Context, ds []*webhooks.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	byID := map[string]*webhooks.Delivery{}
	ids := make([]any, len(ds))
	for i, d := range ds {
		byID[d.ID], ids[i] = d, d.ID
	}
	rows, err := w.db.QueryContext(ctx, `SELECT delivery_id, number, started_at, duration_us, ok, status_code, error, response,
		next_retry_at, node FROM webhook_attempts WHERE delivery_id IN (`+placeholders(1, len(ids))+`) ORDER BY delivery_id, number DESC`, ids...)
	if err != nil {
		return fmt.Errorf("store: read attempts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var a webhooks.Attempt
		var did string
		var started, dur int64
		var code, next sql.NullInt64
		if err := rows.Scan(&did, &a.Number, &started, &dur, &a.OK, &code, &a.Error, &a.Response, &next, &a.Node); err != nil {
			return fmt.Errorf("store: read attempts: %w", err)
		}
		a.StartedAt, a.Duration, a.StatusCode, a.NextRetryAt = fromMicros(started), time.Duration(dur)*time.Microsecond, int(code.Int64), fromNullMicros(next)
		if d := byID[did]; len(d.History) < maxAttemptsShown {
			d.History = append(d.History, a)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, d := range ds { // oldest first
		for i, j := 0, len(d.History)-1; i < j; i, j = i+1, j-1 {
			d.History[i], d.History[j] = d.History[j], d.History[i]
		}
	}
	return nil
}

// Delivery returns one delivery of a subscription with its attempts.
func (w *Webhooks) Delivery(ctx context.Context, subID, id string) (*webhooks.Delivery, error) {
	d, err := scanDelivery(w.db.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries d WHERE d.id = $1 AND d.subscription_id = $2`, id, subID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.NotFoundf("no delivery %q", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get delivery: %w", err)
	}
	return d, w.attachAttempts(ctx, []*webhooks.Delivery{d})
}

// RetryFailed queues the subscription's failed deliveries created since
// since for one more attempt each.
func (w *Webhooks) RetryFailed(ctx context.Context, subID string, since, now time.Time) (int64, error) {
	defer w.serial()()
	res, err := w.db.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'pending', manual = $4, next_attempt_at = $3,
		completed_at = NULL, lease_owner = '', lease_until = 0
		WHERE subscription_id = $1 AND status = 'failed' AND created_at >= $2 AND lease_until < $3`, subID, micros(since), micros(now), true)
	if err != nil {
		return 0, fmt.Errorf("store: retry failed deliveries: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// Stats counts deliveries created since since by status, and attempts with
// their success rate and latency percentiles.
func (w *Webhooks) Stats(ctx context.Context, subID string, since time.Time) (*webhooks.Stats, error) {
	st := &webhooks.Stats{}
	rows, err := w.db.QueryContext(ctx, `SELECT status, COUNT(*) FROM webhook_deliveries WHERE subscription_id = $1 AND created_at >= $2 GROUP BY status`,
		subID, micros(since))
	if err != nil {
		return nil, fmt.Errorf("store: delivery stats: %w", err)
	}
	for rows.Next() {
		var status string
		var n int64
		if err := rows.Scan(&status, &n); err != nil {
			rows.Close()
			return nil, err
		}
		switch status {
		case webhooks.DeliveryPending:
			st.Pending = n
		case webhooks.DeliverySucceeded:
			st.Succeeded = n
		case webhooks.DeliveryFailed:
			st.Failed = n
		}
	}
	rows.Close()
	var answered int64
	if err := w.db.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(CASE WHEN ok THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN status_code IS NOT NULL THEN 1 ELSE 0 END), 0)
		FROM webhook_attempts WHERE subscription_id = $1 AND started_at >= $2`, subID, micros(since)).Scan(&st.Attempts, &st.OKAttempts, &answered); err != nil {
		return nil, fmt.Errorf("store: attempt stats: %w", err)
	}
	for _, p := range []struct {
		q   float64
		dst *time.Duration
	}{{0.50, &st.P50}, {0.95, &st.P95}, {0.99, &st.P99}} {
		if answered == 0 {
			break
		}
		k := int64(float64(answered)*p.q+0.999999) - 1
		var us int64
		if err := w.db.QueryRowContext(ctx, `SELECT duration_us FROM webhook_attempts WHERE subscription_id = $1 AND started_at >= $2
			AND status_code IS NOT NULL ORDER BY duration_us LIMIT 1 OFFSET $3`, subID, micros(since), max(k, 0)).Scan(&us); err != nil {
			return nil, fmt.Errorf("store: latency stats: %w", err)
		}
		*p.dst = time.Duration(us) * time.Microsecond
	}
	return st, nil
}

// TouchStream records that a stream subscription has a reader.
func (w *Webhooks) TouchStream(ctx context.Context, subID string, now time.Time) error {
	defer w.serial()()
	if _, err := w.db.ExecContext(ctx, `UPDATE webhook_subscriptions SET last_seen_at = $2 WHERE id = $1`, subID, micros(now)); err != nil {
		return fmt.Errorf("store: touch stream: %w", err)
	}
	return nil
}

// DeleteStaleStreams deletes stream subscriptions unread since before
// (a listener that exited without deleting its subscription).
func (w *Webhooks) DeleteStaleStreams(ctx context.Context, before time.Time) (int64, error) {
	defer w.serial()()
	res, err := w.db.ExecContext(ctx, `DELETE FROM webhook_subscriptions WHERE transport = 'stream' AND COALESCE(last_seen_at, created_at) < $1`, micros(before))
	if err != nil {
		return 0, fmt.Errorf("store: delete idle streams: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// PurgeDeliveries deletes deliveries (and their attempts) created before before.
func (w *Webhooks) PurgeDeliveries(ctx context.Context, before time.Time) (int64, error) {
	defer w.serial()()
	res, err := w.db.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE created_at < $1`, micros(before))
	if err != nil {
		return 0, fmt.Errorf("store: purge deliveries: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// AppendEvents records events without a domain change, in one transaction:
// for benchmarks and tests that need events of any kind (domains write
// theirs with appendEvent in the transaction of their change).
func (w *Webhooks) AppendEvents(ctx context.Context, evs ...*outbox.Event) error {
	defer w.serial()()
	return w.db.Tx(ctx, func(tx *sql.Tx) error {
		for _, ev := range evs {
			if err := appendEvent(ctx, tx, ev); err != nil {
				return err
			}
		}
		return nil
	})
}
