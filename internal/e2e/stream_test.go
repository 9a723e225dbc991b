package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/stream"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
)

// TestStreamNotifications: a notification reaches every open stream of its
// owner, in the shape GET /v1/notifications/{id} shows, and nobody else's.
func TestStreamNotifications(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		ann, bob := s.User(t, "ann"), s.User(t, "bob")
		annKey, bobKey := keyOf(t, s.App, ann.ID, "read"), keyOf(t, s.App, bob.ID, "read")
		phone, laptop, bobs := openSSE(t, s.URL, "/v1/stream", annKey), openSSE(t, s.URL, "/v1/stream", annKey), openSSE(t, s.URL, "/v1/stream", bobKey)

		n1 := s.Notify(t, ann.ID, notify.KindMatchRequested, "Cy wants to play", "tennis?", "", map[string]string{"match_id": "mch_1"})
		n2 := s.Notify(t, bob.ID, notify.KindMatchAccepted, "Di accepted", "", "", nil)
		n3 := s.Notify(t, ann.ID, notify.KindEventReminder, "Tennis at 6", "", "", nil)

		got := phone.events(t, 2, 10*time.Second)
		if other := laptop.events(t, 2, 10*time.Second); !slices.Equal(sseIDs(other), sseIDs(got)) {
			t.Fatalf("ann's two connections got %v and %v", sseIDs(got), sseIDs(other))
		}
		for i, n := range []*notify.Notification{n1, n3} {
			ev := notificationOfEvent(t, got[i])
			api := api(t, s, http.MethodGet, "/v1/notifications/"+n.ID, annKey, "").JSON(t)
			if !reflect.DeepEqual(ev, api) {
				t.Errorf("streamed notification\n%v\ndiffers from the API's\n%v", ev, api)
			}
		}
		if a, b := mustInt(t, got[0].ID), mustInt(t, got[1].ID); a >= b {
			t.Errorf("ids %d, %d do not increase", a, b)
		}
		mine := bobs.events(t, 1, 10*time.Second)
		if ev := notificationOfEvent(t, mine[0]); ev["id"] != n2.ID {
			t.Fatalf("bob received %v, want his own notification %s", ev["id"], n2.ID)
		}
		bobs.quiet(t, 300*time.Millisecond)
		phone.quiet(t, 10*time.Millisecond)

		// A notification that absorbs another is sent again, grown.
		f1 := s.Notify(t, ann.ID, notify.KindMessage, "Cy sent you a message", "hi", "conversation:cnv_1", nil)
		f2 := s.Notify(t, ann.ID, notify.KindMessage, "Cy sent you 2 messages", "there", "conversation:cnv_1", nil)
		folded := phone.events(t, 2, 10*time.Second)
		a, b := notificationOfEvent(t, folded[0]), notificationOfEvent(t, folded[1])
		if f1.ID != f2.ID || a["id"] != f1.ID || b["id"] != f1.ID || a["count"] != 1.0 || b["count"] != 2.0 || b["body"] != "there" {
			t.Fatalf("folded notifications on the stream: %v then %v", a, b)
		}
	})
}

func mustInt(t testing.TB, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("event id %q is not a number", s)
	}
	return n
}

// TestStreamResume: reconnecting with Last-Event-ID (or last_event_id)
// replays exactly what was missed, then goes on live: nothing lost, nothing
// twice, in order.
func TestStreamResume(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		ann := s.User(t, "ann")
		key := keyOf(t, s.App, ann.ID, "read")
		note := func(i int) *notify.Notification {
			return s.Notify(t, ann.ID, notify.KindEventReminder, fmt.Sprintf("reminder %d", i), "", "", nil)
		}
		first := openSSE(t, s.URL, "/v1/stream", key)
		var all []string // notification ids in the order written
		for i := range 3 {
			all = append(all, note(i).ID)
		}
		seen := first.events(t, 3, 10*time.Second)
		first.close()
		for i := 3; i < 7; i++ {
			all = append(all, note(i).ID)
		}

		names := func(ms []stream.Message) []string {
			var out []string
			for _, m := range ms {
				out = append(out, notificationOfEvent(t, m)["id"].(string))
			}
			return out
		}
		back := openSSE(t, s.URL, "/v1/stream", key, "Last-Event-ID", seen[2].ID)
		missed := back.events(t, 4, 10*time.Second)
		all = append(all, note(7).ID)
		live := back.events(t, 1, 10*time.Second)
		if got := names(append(missed, live...)); !slices.Equal(got, all[3:]) {
			t.Fatalf("after reconnecting got %v, want %v", got, all[3:])
		}
		back.quiet(t, 200*time.Millisecond)
		ids := append(sseIDs(seen), sseIDs(append(missed, live...))...)
		for i := 1; i < len(ids); i++ {
			if mustInt(t, ids[i]) <= mustInt(t, ids[i-1]) {
				t.Fatalf("ids out of order: %v", ids)
			}
		}

		// The query parameter, for clients that cannot set the header.
		q := openSSE(t, s.URL, "/v1/stream?last_event_id="+seen[0].ID, key)
		if got := names(q.events(t, 7, 10*time.Second)); !slices.Equal(got, all[1:]) {
			t.Fatalf("with last_event_id got %v, want %v", got, all[1:])
		}
		// EventSource reconnects to the same URL with a newer header: it wins.
		both := openSSE(t, s.URL, "/v1/stream?last_event_id="+seen[0].ID, key, "Last-Event-ID", ids[len(ids)-2])
		if got := names(both.events(t, 1, 10*time.Second)); !slices.Equal(got, all[7:]) {
			t.Fatalf("with both got %v, want %v", got, all[7:])
		}
		both.quiet(t, 200*time.Millisecond)
	})
}

// TestStreamRefusals: the stream needs a credential with scope read, and a
// Last-Event-ID that is a stream id.
func TestStreamRefusals(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		ann := s.User(t, "ann")
		key := keyOf(t, s.App, ann.ID, "read")
		wantProblem(t, s, api(t, s, http.MethodGet, "/v1/stream", "", ""), http.StatusUnauthorized, "unauthenticated", "")
		wantProblem(t, s, api(t, s, http.MethodGet, "/v1/stream", keyOf(t, s.App, ann.ID, "profile"), ""), http.StatusForbidden, "insufficient_scope", "")
		for _, bad := range []string{"abc", "-1", "1.5", "99999999999999999999"} {
			wantProblem(t, s, apiWithHeader(t, s, http.MethodGet, "/v1/stream", key, "", "Last-Event-ID", bad),
				http.StatusBadRequest, "invalid_last_event_id", "Last-Event-ID")
		}
		wantProblem(t, s, api(t, s, http.MethodGet, "/v1/stream?last_event_id=x", key, ""), http.StatusBadRequest, "invalid_last_event_id", "last_event_id")
	})
}

// TestStreamHeartbeats: an idle stream gets a comment at the configured
// interval, and stays open past the server's read and write timeouts.
func TestStreamHeartbeats(t *testing.T) {
	for _, d := range testdb.Engines() {
		t.Run(string(d), func(t *testing.T) {
			s := apptest.StartWith(t, d, apptest.Options{Configure: func(c *config.Config, _ *app.Options) {
				c.Stream.Heartbeat = 100 * time.Millisecond
			}})
			// The production server's timeouts, shortened.
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{Handler: s.App.Handler, ReadTimeout: 400 * time.Millisecond, WriteTimeout: 400 * time.Millisecond}
			go srv.Serve(ln)
			t.Cleanup(func() { srv.Close() })

			ann := s.User(t, "ann")
			c := openSSE(t, "http://"+ln.Addr().String(), "/v1/stream", keyOf(t, s.App, ann.ID, "read"))
			beats := 0
			deadline := time.After(10 * time.Second)
			for beats < 8 {
				select {
				case m, ok := <-c.msgs:
					if !ok {
						t.Fatalf("the stream ended after %d heartbeats", beats)
					}
					if m.Comment && m.Data == "heartbeat" {
						beats++
					}
				case <-deadline:
					t.Fatalf("%d heartbeats in 10 s at an interval of 100 ms", beats)
				}
			}
			// Past both timeouts, still delivering.
			n := s.Notify(t, ann.ID, notify.KindEventReminder, "still there", "", "", nil)
			if ev := notificationOfEvent(t, c.events(t, 1, 10*time.Second)[0]); ev["id"] != n.ID {
				t.Fatalf("got %v", ev["id"])
			}
		})
	}
}

// TestStreamSlowClient: a client that stops reading is dropped once its
// buffer is full, and another connection of the same person receives every
// event meanwhile.
func TestStreamSlowClient(t *testing.T) {
	for _, d := range testdb.Engines() {
		t.Run(string(d), func(t *testing.T) {
			s := apptest.StartWith(t, d, apptest.Options{Configure: func(c *config.Config, _ *app.Options) {
				c.Stream.Buffer = 32
			}})
			ann := s.User(t, "ann")
			key := keyOf(t, s.App, ann.ID, "read")
			// A raw connection with a small receive window that never reads
			// past the headers: the server's writes to it block.
			conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.(*net.TCPConn).SetReadBuffer(4096)
			fmt.Fprintf(conn, "GET /v1/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", key)
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil || res.StatusCode != http.StatusOK {
				t.Fatalf("stuck client: %v %v", res, err)
			}
			good := openSSE(t, s.URL, "/v1/stream", key)
			apptest.WaitFor(t, "both connections open", func() bool { return s.App.Stream.Stats().Connections == 2 })

			big := strings.Repeat("x", 48<<10)
			const total = 200 // about 10 MB: more than the socket buffers hold
			// Sent a few at a time, each few received by the good client
			// before the next: it is never more than window events behind,
			// well within its buffer, however late the hub reads (on a busy
			// machine one read can take many rows, and a client that many
			// behind is rightly dropped too).
			const window = 8
			var got []stream.Message
			for i := 0; i < total; i += window {
				for j := i; j < i+window; j++ {
					s.Notify(t, ann.ID, notify.KindEventReminder, fmt.Sprint("n", j), big, "", nil)
				}
				got = append(got, good.events(t, window, 60*time.Second)...)
			}
			for i, m := range got {
				var n struct{ Title string }
				if err := json.Unmarshal([]byte(m.Data), &n); err != nil || n.Title != fmt.Sprint("n", i) {
					t.Fatalf("event %d is %q (%v)", i, n.Title, err)
				}
			}
			apptest.WaitFor(t, "the stuck client dropped", func() bool { return s.App.Stream.Stats().Dropped == 1 })
		})
	}
}

// TestStreamEndsWithItsCredential: an open stream does not outlive its
// credential: revoking the key ends it at the next heartbeat, and the
// reconnect is refused.
func TestStreamEndsWithItsCredential(t *testing.T) {
	for _, d := range testdb.Engines() {
		t.Run(string(d), func(t *testing.T) {
			s := apptest.StartWith(t, d, apptest.Options{Configure: func(c *config.Config, _ *app.Options) {
				c.Stream.Heartbeat = 100 * time.Millisecond
			}})
			ann := s.User(t, "ann")
			k, secret, err := s.App.Keys.Create(context.Background(), apikeys.Spec{UserID: ann.ID, Name: "app", Scopes: []string{"read"}})
			if err != nil {
				t.Fatal(err)
			}
			c := openSSE(t, s.URL, "/v1/stream", secret)
			s.Notify(t, ann.ID, notify.KindEventReminder, "before", "", "", nil)
			c.events(t, 1, 10*time.Second)
			if _, err := s.App.Keys.Revoke(context.Background(), ann.ID, k.ID); err != nil {
				t.Fatal(err)
			}
			deadline := time.After(10 * time.Second)
			for ended := false; !ended; {
				select {
				case m, ok := <-c.msgs:
					if !ok {
						ended = true
					} else if !m.Comment {
						t.Fatalf("event %s after the key was revoked", m.ID)
					}
				case <-deadline:
					t.Fatal("the stream stayed open 10 s after its key was revoked")
				}
			}
			wantProblem(t, s, api(t, s, http.MethodGet, "/v1/stream", secret, ""), http.StatusUnauthorized, "invalid_token", "")
		})
	}
}

// TestStreamFromBrowsers: a page on another origin may read the stream with
// fetch, sending its credential and Last-Event-ID.
func TestStreamFromBrowsers(t *testing.T) {
	s := apptest.Start(t, "sqlite")
	ann := s.User(t, "ann")
	req, _ := http.NewRequest(http.MethodOptions, s.URL+"/v1/stream", nil)
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("Access-Control-Request-Method", "GET")
	req.Header.Set("Access-Control-Request-Headers", "authorization, last-event-id")
	r := do(t, req)
	allowed := strings.ToLower(r.Header.Get("Access-Control-Allow-Headers"))
	if r.Status != http.StatusNoContent || !strings.Contains(allowed, "authorization") || !strings.Contains(allowed, "last-event-id") {
		t.Fatalf("preflight: %d, allowed headers %q", r.Status, allowed)
	}
	c := openSSE(t, s.URL, "/v1/stream", keyOf(t, s.App, ann.ID, "read"), "Origin", "https://app.example.com")
	if got := c.res.Header.Get("Access-Control-Allow-Origin"); got != "*" {
		t.Fatalf("Access-Control-Allow-Origin = %q", got)
	}
}
