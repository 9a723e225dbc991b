package stream

import (
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
)

// TestSSERoundTrip: what WriteSSE writes, Read reads back, data lines with
// newlines and comments included.
func TestSSERoundTrip(t *testing.T) {
	var b strings.Builder
	b.WriteString(": hello\nretry: 2000\n\n")
	for _, ev := range []Event{
		{Seq: 7, Kind: "message.sent", Data: json.RawMessage(`{"message":{"body":"hi"}}`)},
		{Seq: 9, Kind: "odd", Data: json.RawMessage("line one\nline two")},
	} {
		if err := WriteSSE(&b, ev); err != nil {
			t.Fatal(err)
		}
	}
	b.WriteString(": heartbeat\n\ndata: bare\n\n")
	var got []Message
	err := Read(strings.NewReader(b.String()), func(m Message) error { got = append(got, m); return nil })
	if err != io.EOF {
		t.Fatalf("Read ended with %v, want io.EOF", err)
	}
	want := []Message{
		{Comment: true, Data: "hello"},
		{ID: "7", Event: "message.sent", Data: `{"message":{"body":"hi"}}`},
		{ID: "9", Event: "odd", Data: "line one\nline two"},
		{Comment: true, Data: "heartbeat"},
		{Event: "message", Data: "bare"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read\n%+v\nwant\n%+v", got, want)
	}
}
