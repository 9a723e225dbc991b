// Package stream is the real-time stream of each account: what a client
// connected to GET /v1/stream receives as server-sent events (new messages,
// edits, deletes, read markers, typing, notifications).
//
// Every change writes one row per recipient to stream_events in its own
// transaction (store.appendStream). Each node runs one Hub: one reader that
// follows the table by sequence number and hands each new row to the
// connections of its recipient on this node (reading whole only the rows
// of recipients connected there). Nodes learn that rows were
// committed from PostgreSQL LISTEN/NOTIFY (or, on SQLite, which has one
// node, from the commit itself); a reconnect with Last-Event-ID replays
// what the client missed from the table, so nothing is lost across a
// reconnect, a dropped slow client or a node restart.
package stream

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"time"
)

// Event is one row of a recipient's stream.
type Event struct {
	Seq    int64 // the SSE id; increasing over the whole table
	UserID string
	Kind   string // the SSE event name: message.sent, notification...
	Data   json.RawMessage
	At     time.Time
	// Hidden rows are no longer the recipient's to see (they left the
	// conversation, or block its author, since the row was written): the
	// hub passes over them without delivering them.
	Hidden bool
	// Skipped rows were read as their number and recipient alone: the
	// recipient had no connection on this node (Store.After).
	Skipped bool
}

// Kinds of events written by this package; the messaging kinds
// (message.sent, message.edited, message.deleted, message.read,
// conversation.updated, conversation.typing) are written by messaging.
const (
	KindNotification = "notification"
	// KindTyping is not replayed once older than TypingTTL: "is typing"
	// from a minute ago is not news.
	KindTyping = "conversation.typing"
)

// TypingTTL is how long a typing event is worth replaying.
const TypingTTL = 10 * time.Second

// WriteSSE writes ev in the text/event-stream format: its sequence number
// as the id (what the client sends back as Last-Event-ID), its kind as the
// event name and its data as JSON.
func WriteSSE(w io.Writer, ev Event) error {
	var b strings.Builder
	b.Grow(len(ev.Data) + len(ev.Kind) + 40)
	b.WriteString("id: ")
	b.WriteString(strconv.FormatInt(ev.Seq, 10))
	b.WriteString("\nevent: ")
	b.WriteString(ev.Kind)
	b.WriteString("\n")
	// Stored data is compact JSON (no newline), but a data line must never
	// hold one: split if it ever does.
	for _, line := range strings.Split(string(ev.Data), "\n") {
		b.WriteString("data: ")
		b.WriteString(line)
		b.WriteString("\n")
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// Message is one server-sent event as a client reads it.
type Message struct {
	ID      string // empty when the event set none
	Event   string // "message" when the event set none
	Data    string
	Comment bool // a comment line (the heartbeat): no ID, Event or Data
}

// Read parses a text/event-stream body and calls fn with each event and
// each comment (heartbeats), until the body ends, fn returns an error, or
// the body fails. It is the client side of WriteSSE, for tools and tests
// (the messaging benchmark reads its thousand streams with it).
func Read(r io.Reader, fn func(Message) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var m Message
	var data []string
	pending := false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if pending {
				m.Data = strings.Join(data, "\n")
				if m.Event == "" {
					m.Event = "message"
				}
				if err := fn(m); err != nil {
					return err
				}
			}
			m, data, pending = Message{}, nil, false
			continue
		}
		if strings.HasPrefix(line, ":") {
			if err := fn(Message{Comment: true, Data: strings.TrimPrefix(strings.TrimPrefix(line, ":"), " ")}); err != nil {
				return err
			}
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			m.ID, pending = value, true
		case "event":
			m.Event, pending = value, true
		case "data":
			data, pending = append(data, value), true
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.EOF
}
