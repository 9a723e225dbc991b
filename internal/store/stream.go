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
// node that stream rows were committed (a trigger of stream_events sends
// it, migration 00091). The payload is empty: nodes read
// the rows themselves, by sequence number, so a notification carries no
// data that could be lost, reordered or too large (NOTIFY caps payloads at
// 8,000 bytes), and the notifications of one transaction fold into one.
const streamChannel = "matchpoint_stream"

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
	entries := make([]streamEntry, len(userIDs))
	for i, id := range userIDs {
		entries[i] = streamEntry{userID: id, kind: kind, body: body, at: at}
	}
	appendStreamEntries(tx, entries)
	return nil
}

// streamEntry is one row of a user's stream, its data encoded. tags, when
// set, are what tagsOf would read out of body (a caller that knows them
// spares the decoding).
type streamEntry struct {
	userID, kind string
	body         []byte
	at           time.Time
	tags         *streamTags
}

// appendStreamEntries adds entries to the stream rows tx writes when its
// work ends (pending.go). Written last, the rows take their sequence
// numbers just before the commit: the stream waits only so long for a
// number whose transaction has yet to commit.
func appendStreamEntries(tx *sql.Tx, entries []streamEntry) {
	pendingOf(tx).stream.add(entries...)
}

// insertStream writes entries in one statement (a message to a group of
// 100 is 100 rows; on PostgreSQL each statement is a round trip). On
// PostgreSQL an entry with the same kind, time and body (the same encoded
// bytes) as the one before it shares its parameters, so that a group's
// copies of one message cross the network once; on SQLite, in the same
// process, each row has its own, in order, which SQLite binds in linear
// time (sqlite_stmts.go, positional).
func insertStream(ctx context.Context, tx *sql.Tx, entries []streamEntry) error {
	share := pendingOf(tx).postgres
	rows := make([]string, len(entries))
	args := make([]any, 0, 7*len(entries))
	shared := 0 // the parameter number of the current shared columns
	var t *streamTags
	var body string
	for i, e := range entries {
		same := i > 0 && sameStreamData(entries[i-1], e)
		if !same {
			if t = e.tags; t == nil {
				tt := tagsOf(e.kind, e.body)
				t = &tt
			}
			body = string(e.body)
		}
		if !share {
			args = append(args, e.userID, e.kind, body, micros(e.at), nullString(t.conversationID), nullString(t.messageID), nullString(t.actorID))
			rows[i] = "(" + placeholders(len(args)-6, 7) + ")"
			continue
		}
		if !same {
			args = append(args, e.kind, body, micros(e.at), nullString(t.conversationID), nullString(t.messageID), nullString(t.actorID))
			shared = len(args) - 5
		}
		args = append(args, e.userID)
		rows[i] = fmt.Sprintf("($%d, $%d, $%d, $%d, $%d, $%d, $%d)", len(args), shared, shared+1, shared+2, shared+3, shared+4, shared+5)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO stream_events (user_id, kind, data, created_at, conversation_id, message_id, actor_id) VALUES `+
		strings.Join(rows, ", "), args...); err != nil {
		return fmt.Errorf("store: append stream events: %w", err)
	}
	return nil
}

// sameStreamData is true when b carries a's data: the same encoding, not
// merely equal bytes (the check must cost nothing).
func sameStreamData(a, b streamEntry) bool {
	return a.kind == b.kind && a.at.Equal(b.at) && len(a.body) == len(b.body) &&
		(len(a.body) == 0 || &a.body[0] == &b.body[0])
}

func init() {
	// A stream event is addressed to its recipient alone: the erased
	// account's own stream goes with it, including the rows the erasure's
	// own earlier steps addressed to it (leaving an event's conversation),
	// which wait in the transaction until written here.
	registerEraser("stream_events", []string{"user_id"}, func(ctx context.Context, tx *sql.Tx, e erasure) error {
		if err := flushPending(ctx, tx); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM stream_events WHERE user_id = $1`, e.UserID)
		return err
	})
	// Others' rows and notifications about the erased account's messages
	// lose their text and its name (the messages eraser, which runs first,
	// made the messages tombstones and kept their sender_id).
	registerEraser("stream_events", []string{"actor_id"}, func(ctx context.Context, tx *sql.Tx, e erasure) error {
		return redactAuthor(ctx, tx, e.UserID)
	})
}

// pendingBeforeCommit writes the rows a transaction has left to write,
// and says whether it wrote stream rows. (On PostgreSQL the stream table's
// trigger adds the NOTIFY that wakes the other nodes, delivered when, and
// only if, the transaction commits.)
func (db *DB) pendingBeforeCommit(ctx context.Context, tx *sql.Tx) (streamed bool, err error) {
	if err := flushPending(ctx, tx); err != nil {
		return false, err
	}
	if p, ok := pendingTxs.Load(tx); ok {
		streamed = p.(*txPending).wroteStream
	}
	return streamed, nil
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

// After returns up to limit rows of every recipient after seq, in order:
// whole for the recipients want accepts, and as their number and
// recipient alone (Skipped) for the others. Each node's hub reads the rows
// of its own connections' recipients: what costs most in a row is the
// check that its recipient may still see it (streamVisible), and a node
// with nobody connected for a row, or nobody at all, has no use for it.
func (s *Stream) After(ctx context.Context, after int64, limit int, want func(userID string) bool) ([]stream.Event, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, user_id FROM stream_events WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("store: read the stream: %w", err)
	}
	var heads []stream.Event
	for rows.Next() {
		ev := stream.Event{Skipped: true}
		if err := rows.Scan(&ev.Seq, &ev.UserID); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: read the stream: %w", err)
		}
		heads = append(heads, ev)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: read the stream: %w", err)
	}
	var users []string
	wanted := map[string]bool{} // each recipient asked once
	for _, h := range heads {
		if _, asked := wanted[h.UserID]; asked {
			continue
		}
		w := want(h.UserID)
		wanted[h.UserID] = w
		if w {
			users = append(users, h.UserID)
		}
	}
	if len(users) == 0 {
		return heads, nil
	}
	whole := `SELECT seq, user_id, kind, data, created_at, NOT ` + streamVisible + ` FROM stream_events e
		WHERE e.seq > $1 AND e.seq <= $2`
	var read []stream.Event
	if len(users) == len(wanted) { // all of them: no list to check
		read, err = s.query(ctx, whole+` ORDER BY e.seq`, after, heads[len(heads)-1].Seq)
	} else {
		// One parameter for the list (one statement text; on SQLite
		// json_each keeps the values out of the planner's estimates). The
		// rows are taken in the range of numbers, the list checked on each
		// ("+" keeps SQLite from seeking each user's rows in their index).
		in, list := `e.user_id = ANY($3::text[])`, any(users)
		if s.db.Dialect == SQLite {
			in, list = `+e.user_id IN (SELECT value FROM json_each($3))`, jsonList(users)
		}
		read, err = s.query(ctx, whole+` AND `+in+` ORDER BY e.seq`, after, heads[len(heads)-1].Seq, list)
	}
	if err != nil {
		return nil, err
	}
	// Both reads are in sequence order: each whole row takes the place of
	// its number. (On PostgreSQL the second read may see a row the first
	// did not, committed in between: it is left for the next read, after
	// the rows before it.)
	i := 0
	for _, ev := range read {
		for i < len(heads) && heads[i].Seq < ev.Seq {
			i++
		}
		if i < len(heads) && heads[i].Seq == ev.Seq {
			heads[i] = ev
		}
	}
	return heads, nil
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
