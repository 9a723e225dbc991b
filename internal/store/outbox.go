package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/outbox"
)

// appendEvent adds an outbox event to the transaction of its change, with
// a pending row for every consumer: the event and its queue entries commit
// (and become visible) together, or not at all. They are written when the
// transaction's work ends (pending.go), with the other events of that work.
func appendEvent(ctx context.Context, tx *sql.Tx, ev *outbox.Event) error {
	if ev == nil {
		return nil
	}
	pendingOf(tx).events.add(ev)
	return nil
}

// insertEvents writes events, in their order, and their consumers' pending
// rows: on PostgreSQL in one statement (a round trip) per chunk, on SQLite
// in two.
func insertEvents(ctx context.Context, tx *sql.Tx, evs []*outbox.Event) error {
	const cols, chunk = 6, 500
	postgres := pendingOf(tx).postgres
	for len(evs) > 0 {
		part := evs[:min(len(evs), chunk)]
		evs = evs[len(part):]
		rows := make([]string, len(part))
		args := make([]any, 0, cols*len(part)+len(outbox.Consumers))
		for i, ev := range part {
			rows[i] = "(" + placeholders(i*cols+1, cols) + ")"
			args = append(args, ev.ID, ev.Type, nullString(ev.UserID), strings.Join(ev.Audience, " "), string(ev.Payload), micros(ev.Created))
		}
		insert := `INSERT INTO outbox_events (id, type, user_id, audience, payload, created_at) VALUES ` + strings.Join(rows, ", ") + ` RETURNING seq`
		if postgres {
			consumers := make([]string, len(outbox.Consumers))
			for i, c := range outbox.Consumers {
				args = append(args, c)
				consumers[i] = fmt.Sprintf("($%d)", len(args))
			}
			if _, err := tx.ExecContext(ctx, `WITH e AS (`+insert+`)
				INSERT INTO outbox_pending (consumer, seq) SELECT c.consumer, e.seq FROM e CROSS JOIN (VALUES `+strings.Join(consumers, ", ")+`) AS c(consumer)`, args...); err != nil {
				return fmt.Errorf("store: append %s event: %w", part[0].Type, err)
			}
			continue
		}
		seqs, err := queryColumn[int64](ctx, tx, insert, args...)
		if err != nil {
			return fmt.Errorf("store: append %s event: %w", part[0].Type, err)
		}
		pending := make([]string, 0, len(seqs)*len(outbox.Consumers))
		pargs := make([]any, 0, 2*cap(pending))
		for _, seq := range seqs {
			for _, c := range outbox.Consumers {
				pargs = append(pargs, c, seq)
				pending = append(pending, fmt.Sprintf("($%d, $%d)", len(pargs)-1, len(pargs)))
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO outbox_pending (consumer, seq) VALUES `+strings.Join(pending, ", "), pargs...); err != nil {
			return fmt.Errorf("store: queue %s event: %w", part[0].Type, err)
		}
	}
	return nil
}

// Outbox is the consumer side of the outbox: a queue per consumer from which
// work is claimed under a lease. A lease that expires (its node died) is
// claimed again by another node, so every event is handled at least once.
type Outbox struct{ db *DB }

// NewOutbox returns the outbox over db.
func NewOutbox(db *DB) *Outbox { return &Outbox{db: db} }

// Claimed is an event leased to a consumer.
type Claimed struct {
	Seq   int64
	Event outbox.Event
}

// ErrLeaseLost aborts a consumer's transaction whose lease another node took
// over after it expired: that node does the work instead.
var ErrLeaseLost = errors.New("store: outbox lease lost")

const eventColumns = `e.seq, e.id, e.type, COALESCE(e.user_id, ''), e.audience, e.payload, e.created_at`

func scanEvent(row scanner) (Claimed, error) {
	var c Claimed
	var audience, payload string
	var created int64
	if err := row.Scan(&c.Seq, &c.Event.ID, &c.Event.Type, &c.Event.UserID, &audience, &payload, &created); err != nil {
		return c, err
	}
	c.Event.Audience, c.Event.Payload, c.Event.Created = strings.Fields(audience), []byte(payload), fromMicros(created)
	return c, nil
}

// Claim leases up to limit of the consumer's pending events, oldest first,
// to owner until now+lease. Rows leased to someone else and not yet expired
// are skipped, never waited for.
func (o *Outbox) Claim(ctx context.Context, consumer, owner string, now time.Time, lease time.Duration, limit int) ([]Claimed, error) {
	var out []Claimed
	err := o.db.Tx(ctx, func(tx *sql.Tx) error {
		// PostgreSQL: SKIP LOCKED lets nodes claim side by side without
		// blocking on each other's rows. SQLite: the IMMEDIATE transaction
		// already holds the write lock, so a plain subquery is exact.
		pick := `SELECT seq FROM outbox_pending WHERE consumer = $1 AND lease_until < $4 ORDER BY seq LIMIT $5`
		if o.db.Dialect == Postgres {
			pick += ` FOR UPDATE SKIP LOCKED`
		}
		rows, err := tx.QueryContext(ctx, `UPDATE outbox_pending SET lease_owner = $2, lease_until = $3
			WHERE consumer = $1 AND seq IN (`+pick+`) RETURNING seq`,
			consumer, owner, micros(now.Add(lease)), micros(now), limit)
		if err != nil {
			return err
		}
		var seqs []any
		for rows.Next() {
			var s int64
			if err := rows.Scan(&s); err != nil {
				rows.Close()
				return err
			}
			seqs = append(seqs, s)
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(seqs) == 0 {
			return err
		}
		rows, err = tx.QueryContext(ctx, `SELECT `+eventColumns+` FROM outbox_events e WHERE e.seq IN (`+placeholders(1, len(seqs))+`) ORDER BY e.seq`, seqs...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			c, err := scanEvent(rows)
			if err != nil {
				return err
			}
			out = append(out, c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim outbox events: %w", err)
	}
	return out, nil
}

// outboxDone removes a claimed event from the consumer's queue inside the
// consumer's own transaction, so the work it recorded and the end of the
// lease commit together. ErrLeaseLost means another node holds it now.
func outboxDone(ctx context.Context, tx *sql.Tx, consumer, owner string, seq int64) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM outbox_pending WHERE consumer = $1 AND seq = $2 AND lease_owner = $3`, consumer, seq, owner)
	if err != nil {
		return fmt.Errorf("store: finish outbox event: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrLeaseLost
	}
	return nil
}

// Done removes claimed events from the consumer's queue in a transaction of
// their own, for consumers whose work writes nothing else.
func (o *Outbox) Done(ctx context.Context, consumer, owner string, seqs ...int64) error {
	return o.db.Tx(ctx, func(tx *sql.Tx) error {
		for _, s := range seqs {
			if err := outboxDone(ctx, tx, consumer, owner, s); err != nil {
				return err
			}
		}
		return nil
	})
}

// Release hands leases back (a node stopping), so others claim them at once.
func (o *Outbox) Release(ctx context.Context, consumer, owner string) error {
	_, err := o.db.ExecContext(ctx, `UPDATE outbox_pending SET lease_owner = '', lease_until = 0 WHERE consumer = $1 AND lease_owner = $2`,
		consumer, owner)
	if err != nil {
		return fmt.Errorf("store: release outbox leases: %w", err)
	}
	return nil
}

// Pending counts a consumer's events not yet done (a metric and a test aid).
func (o *Outbox) Pending(ctx context.Context, consumer string) (int64, error) {
	var n int64
	if err := o.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM outbox_pending WHERE consumer = $1`, consumer).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count pending outbox events: %w", err)
	}
	return n, nil
}

// Recorded lists committed events after seq in order, for tests and tools
// that inspect what was recorded. It is not a consumer: a reader that moves
// past a sequence number can miss a transaction that commits late.
func (o *Outbox) Recorded(ctx context.Context, seq int64, limit int) ([]outbox.Event, error) {
	rows, err := o.db.QueryContext(ctx, `SELECT `+eventColumns+` FROM outbox_events e WHERE e.seq > $1 ORDER BY e.seq LIMIT $2`, seq, limit)
	if err != nil {
		return nil, fmt.Errorf("store: read outbox: %w", err)
	}
	defer rows.Close()
	var evs []outbox.Event
	for rows.Next() {
		c, err := scanEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("store: read outbox: %w", err)
		}
		evs = append(evs, c.Event)
	}
	return evs, rows.Err()
}

// placeholders returns "$from, $from+1, ..." for n arguments.
func placeholders(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", from+i)
	}
	return b.String()
}

func init() {
	registerEraser("outbox_events", []string{"user_id"}, redactEvents)
}

// redactEvents reduces the data of the account's earlier events to the ids
// of their resources: an erased account's email, names or words must not
// live on in the outbox, or reach a webhook subscriber later.
func redactEvents(ctx context.Context, tx *sql.Tx, e erasure) error {
	if err := flushPending(ctx, tx); err != nil { // events held until now
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, payload FROM outbox_events WHERE user_id = $1`, e.UserID)
	if err != nil {
		return fmt.Errorf("store: read events to redact: %w", err)
	}
	type row struct{ id, payload string }
	var all []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.payload); err != nil {
			rows.Close()
			return fmt.Errorf("store: read events to redact: %w", err)
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range all {
		var env outbox.Envelope
		if err := json.Unmarshal([]byte(r.payload), &env); err != nil {
			return fmt.Errorf("store: event %s: %w", r.id, err)
		}
		for name, raw := range env.Data {
			var obj struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(raw, &obj) // a resource without an id keeps none
			env.Data[name], _ = json.Marshal(map[string]any{"id": obj.ID, "redacted": true})
		}
		b, err := json.Marshal(env)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE outbox_events SET payload = $2 WHERE id = $1`, r.id, string(b)); err != nil {
			return fmt.Errorf("store: redact event %s: %w", r.id, err)
		}
	}
	return nil
}
