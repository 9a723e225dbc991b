package stream

import (
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"
)

// TestDeliverRereadsASkippedRowBeforeItsGap: a row read without its data
// whose recipient is connected now makes the reader read again before
// anything else, a gap before the row included; the gap is then waited
// for and given up once, and the row, read whole, goes out.
func TestDeliverRereadsASkippedRowBeforeItsGap(t *testing.T) {
	h := NewHub(nil, Options{GapGrace: time.Nanosecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	h.horizon = 10
	c := &Conn{hub: h, userID: "usr_a", after: 10, live: make(chan Event, 4), done: make(chan struct{})}
	h.conns["usr_a"] = map[*Conn]struct{}{c: {}}

	// 11 is missing (still committing, or rolled back).
	if wait, again := h.deliver([]Event{{Seq: 12, UserID: "usr_a", Skipped: true}}); !again || wait != 0 {
		t.Fatalf("deliver = %v, %v; want a read again at once", wait, again)
	}
	whole := []Event{{Seq: 12, UserID: "usr_a", Kind: "test.event", Data: json.RawMessage(`1`)}}
	if wait, again := h.deliver(whole); again || wait <= 0 {
		t.Fatalf("deliver = %v, %v; want a wait for the gap", wait, again)
	}
	time.Sleep(time.Millisecond)
	if wait, again := h.deliver(whole); again || wait != 0 {
		t.Fatalf("deliver = %v, %v; want the gap given up", wait, again)
	}
	if n := h.gapsSkipped.Load(); n != 1 {
		t.Fatalf("%d gaps counted, want 1", n)
	}
	select {
	case ev := <-c.live:
		if ev.Seq != 12 || string(ev.Data) != "1" {
			t.Fatalf("delivered %+v", ev)
		}
	default:
		t.Fatal("the row was not delivered")
	}
	if h.horizon != 12 {
		t.Fatalf("horizon %d, want 12", h.horizon)
	}
}
