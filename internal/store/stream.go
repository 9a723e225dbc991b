package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/matchpoint-api/matchpoint/internal/stream"
)

// streamChannel is the PostgreSQL notification channel that tells every
// node that stream rows were committed. The payload is empty: nodes read
// the rows themselves, by sequence number, so a notification carries no
// data that could be lost, reordered or too large (NOTIFY caps payloads at
// 8,000 bytes), and the notifications of one transaction fold into one.
const streamChannel = "matchpoint_stream"

// streamTxs holds the transactions that appended stream rows, until DB.Tx
// ends them: before the commit it adds the NOTIFY (PostgreSQL), after it,
// it wakes this process's hub.
var streamTxs sync.Map // *sql.Tx -> struct{}

// appendStream writes kind with data to the real-time stream of every user in
// userIDs, inside the transaction of the change it reports: the stream shows
// a change only once it commits, and a reconnect replays it from here. Domains
// call it next to appendEvent; the stream package reads and fans these out.
func appendStream(ctx context.Context, tx *sql.Tx, userIDs []string, kind string, data any, at time.Time) error {
	if len(userIDs) == 0 {
		return nil
	}
	body, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("store: encode %s stream event: %w", kind, err)
	}
	t := tagsOf(kind, body)
	// One statement for every recipient (a message to a group of 100 is
	// 100 rows; on PostgreSQL each statement is a round trip).
	rows := make([]string, len(userIDs))
	args := make([]any, 0, 6+len(userIDs))
	args = append(args, kind, string(body), micros(at), nullString(t.conversationID), nullString(t.messageID), nullString(t.actorID))
	for i, id := range userIDs {
		rows[i] = fmt.Sprintf("($%d, $1, $2, $3, $4, $5, $6)", 7+i)
		args = append(args, id)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO stream_events (user_id, kind, data, created_at, conversation_id, message_id, actor_id) VALUES `+
		strings.Join(rows, ", "), args...); err != nil {
		return fmt.Errorf("store: append %s stream event: %w", kind, err)
	}
	streamTxs.Store(tx, struct{}{})
	return nil
}

func init() {
	// A stream event is addressed to its recipient alone: the erased
	// account's own stream goes with it.
	deleteRowsOf("stream_events", "user_id")
	// Others' rows and notifications about the erased account's messages
	// lose their text and its name (the messages eraser, which runs first,
	// made the messages tombstones and kept their sender_id).
	registerEraser("stream_events", []string{"actor_id"}, func(ctx context.Context, tx *sql.Tx, e erasure) error {
		return redactAuthor(ctx, tx, e.UserID)
	})
}

// streamBeforeCommit issues the NOTIFY of a transaction that appended stream
// rows, inside it: PostgreSQL delivers it when (and only if) the
// transaction commits, after its rows are visible.
func (db *DB) streamBeforeCommit(ctx context.Context, tx *sql.Tx) (wrote bool, err error) {
	if _, wrote = streamTxs.Load(tx); !wrote || db.Dialect != Postgres {
		return wrote, nil
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_notify($1, '')`, streamChannel); err != nil {
		return true, fmt.Errorf("store: notify the stream: %w", err)
	}
	return true, nil
}

// streamCommitted wakes this process's hub after a commit of stream rows.
func (db *DB) streamCommitted() {
	select {
	case db.streamSignal() <- struct{}{}:
	default: // a wake-up is pending already
	}
}

var streamSignals sync.Map // *DB -> chan struct{}

func (db *DB) streamSignal() chan struct{} {
	ch, _ := streamSignals.LoadOrStore(db, make(chan struct{}, 1))
	return ch.(chan struct{})
}

// Stream reads the real-time stream's table for the hub (stream.Store).
type Stream struct{ db *DB }

// NewStream returns the stream's store.
func NewStream(db *DB) *Stream { return &Stream{db: db} }

// Commits signals each commit of stream rows by this process.
func (s *Stream) Commits() <-chan struct{} { return s.db.streamSignal() }

// Head returns the highest sequence number committed so far.
func (s *Stream) Head(ctx context.Context) (int64, error) {
	var head sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MAX(seq) FROM stream_events`).Scan(&head); err != nil {
		return 0, fmt.Errorf("store: stream head: %w", err)
	}
	return head.Int64, nil
}

// After returns up to limit rows of every recipient after seq, in order.
func (s *Stream) After(ctx context.Context, after int64, limit int) ([]stream.Event, error) {
	return s.query(ctx, `SELECT seq, user_id, kind, data, created_at, NOT `+streamVisible+` FROM stream_events e
		WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit)
}

// Replay returns up to limit rows of userID in (after, upTo], in order,
// without typing events older than typingSince.
func (s *Stream) Replay(ctx context.Context, userID string, after, upTo int64, typingSince time.Time, limit int) ([]stream.Event, error) {
	return s.query(ctx, `SELECT seq, user_id, kind, data, created_at, FALSE FROM stream_events e
		WHERE user_id = $1 AND seq > $2 AND seq <= $3 AND (kind <> $4 OR created_at >= $5) AND `+streamVisible+`
		ORDER BY seq LIMIT $6`, userID, after, upTo, stream.KindTyping, micros(typingSince), limit)
}

func (s *Stream) query(ctx context.Context, q string, args ...any) ([]stream.Event, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: read the stream: %w", err)
	}
	defer rows.Close()
	var out []stream.Event
	for rows.Next() {
		var ev stream.Event
		var data string
		var at int64
		if err := rows.Scan(&ev.Seq, &ev.UserID, &ev.Kind, &data, &at, &ev.Hidden); err != nil {
			return nil, fmt.Errorf("store: read the stream: %w", err)
		}
		ev.Data, ev.At = json.RawMessage(data), fromMicros(at)
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: read the stream: %w", err)
	}
	return out, nil
}

// Listen calls wake on every commit of stream rows by any node, until ctx
// ends or the connection fails. On PostgreSQL it holds one connection of
// the pool in LISTEN; SQLite serves one node, whose commits Commits reports,
// so there it returns at once.
func (s *Stream) Listen(ctx context.Context, wake func()) error {
	if s.db.Dialect != Postgres {
		return nil
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: stream listener: %w", err)
	}
	defer conn.Close()
	var failed error
	// The callback always ends with driver.ErrBadConn, so the pool closes
	// the connection instead of handing out one that is in LISTEN (or
	// broken by the cancellation that stopped the wait).
	_ = conn.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		if _, err := pc.Exec(ctx, "LISTEN "+streamChannel); err != nil {
			failed = fmt.Errorf("store: listen: %w", err)
			return driver.ErrBadConn
		}
		// Rows may have committed before LISTEN took effect.
		wake()
		for {
			if _, err := pc.WaitForNotification(ctx); err != nil {
				if ctx.Err() == nil {
					failed = fmt.Errorf("store: wait for stream notifications: %w", err)
				}
				return driver.ErrBadConn
			}
			wake()
		}
	})
	return failed
}
