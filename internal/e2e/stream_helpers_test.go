package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/stream"
)

// sse is a client of GET /v1/stream: what it reads arrives on msgs.
type sse struct {
	res    *http.Response
	msgs   chan stream.Message
	cancel context.CancelFunc
}

// openSSE connects to the stream of the service at base with token; headers
// are name, value pairs (Last-Event-ID). It fails the test unless the
// answer is 200 text/event-stream.
func openSSE(t testing.TB, base, path, token string, headers ...string) *sse {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		res.Body.Close()
		cancel()
		t.Fatalf("stream answered %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	c := &sse{res: res, msgs: make(chan stream.Message, 10000), cancel: cancel}
	go func() {
		defer close(c.msgs)
		_ = stream.Read(res.Body, func(m stream.Message) error { c.msgs <- m; return nil })
	}()
	t.Cleanup(c.close)
	return c
}

func (c *sse) close() {
	c.cancel()
	c.res.Body.Close()
}

// events reads n events (skipping comments), failing after timeout.
func (c *sse) events(t testing.TB, n int, timeout time.Duration) []stream.Message {
	t.Helper()
	var out []stream.Message
	deadline := time.After(timeout)
	for len(out) < n {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				t.Fatalf("the stream ended after %d of %d events", len(out), n)
			}
			if !m.Comment {
				out = append(out, m)
			}
		case <-deadline:
			t.Fatalf("received %d of %d events in %s", len(out), n, timeout)
		}
	}
	return out
}

// quiet fails if an event arrives within d.
func (c *sse) quiet(t testing.TB, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				return
			}
			if !m.Comment {
				t.Fatalf("unexpected event %s %s: %s", m.ID, m.Event, m.Data)
			}
		case <-deadline:
			return
		}
	}
}

// ids lists the events' ids.
func sseIDs(ms []stream.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

// notificationOfEvent decodes a notification event's data.
func notificationOfEvent(t testing.TB, m stream.Message) map[string]any {
	t.Helper()
	if m.Event != stream.KindNotification {
		t.Fatalf("event %s is %q, want notification", m.ID, m.Event)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(m.Data), &v); err != nil {
		t.Fatalf("notification event data: %v\n%s", err, m.Data)
	}
	return v
}
