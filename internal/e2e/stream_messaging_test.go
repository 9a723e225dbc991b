package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/httpapi"
	"github.com/matchpoint-api/matchpoint/internal/messaging"
	"github.com/matchpoint-api/matchpoint/internal/stream"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// sentIDs lists the ids of the messages of the message.sent events in ms.
func sentIDs(t testing.TB, ms []stream.Message) []string {
	t.Helper()
	var out []string
	for _, m := range ms {
		if m.Event != messaging.StreamSent {
			continue
		}
		var d struct{ Message struct{ ID string } }
		if err := json.Unmarshal([]byte(m.Data), &d); err != nil || d.Message.ID == "" {
			t.Fatalf("message.sent data %s: %v", m.Data, err)
		}
		out = append(out, d.Message.ID)
	}
	return out
}

// untilSent reads events until n message.sent events have arrived, and
// returns every event read.
func (c *sse) untilSent(t testing.TB, n int, timeout time.Duration) []stream.Message {
	t.Helper()
	var out []stream.Message
	for len(sentIDs(t, out)) < n {
		out = append(out, c.events(t, 1, timeout)...)
	}
	return out
}

// until reads events until one of kind arrives, and returns every event read.
func (c *sse) until(t testing.TB, kind string, timeout time.Duration) []stream.Message {
	t.Helper()
	var out []stream.Message
	for len(out) == 0 || out[len(out)-1].Event != kind {
		out = append(out, c.events(t, 1, timeout)...)
	}
	return out
}

// TestStreamMessagesOnTwoNodes: two service processes on one PostgreSQL. A
// client connected to node A receives, in order, the messages sent through
// node B; after a reconnect to node B with Last-Event-ID it gets exactly
// what it missed, in order, and nothing twice.
func TestStreamMessagesOnTwoNodes(t *testing.T) {
	c := apptest.StartCluster(t, 2)
	ctx := context.Background()
	nodeA, nodeB := c.Nodes[0], c.Nodes[1]
	person := func(name string) (*users.User, string) {
		u, err := c.App.Users.Register(ctx, users.Registration{Email: name + "@example.com", Username: name, Password: apptest.Password, FirstName: name})
		if err != nil {
			t.Fatal(err)
		}
		return u, keyOf(t, c.App, u.ID, "read", "write")
	}
	ann, annKey := person("ann")
	_, bobKey := person("bob")
	r := nodeAPI(t, nodeB.URL, http.MethodPost, "/v1/conversations", bobKey, fmt.Sprintf(`{"member_ids":[%q]}`, ann.ID))
	conv := decode[httpapi.Conversation](t, r, r.Status)
	send := func(node *apptest.Node, i int) string {
		r := nodeAPI(t, node.URL, http.MethodPost, "/v1/conversations/"+conv.ID+"/messages", bobKey, fmt.Sprintf(`{"body":"message %d"}`, i))
		return decode[messaging.View](t, r, http.StatusCreated).ID
	}
	// rowsAfter lists ann's stream event ids after seq, from the database.
	rowsAfter := func(seq string) []string {
		rows, err := c.App.DB.QueryContext(ctx, `SELECT seq FROM stream_events WHERE user_id = $1 AND seq > $2 ORDER BY seq`, ann.ID, mustInt(t, seq))
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s int64
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(s))
		}
		return out
	}

	const each = 8
	onA := openSSE(t, nodeA.URL, "/v1/stream", annKey)
	var sent []string
	for i := range each {
		sent = append(sent, send(nodeB, i))
	}
	got := onA.untilSent(t, each, 30*time.Second)
	if !slices.Equal(sentIDs(t, got), sent) {
		t.Fatalf("node A received %v, want in order %v", sentIDs(t, got), sent)
	}
	last := got[len(got)-1].ID
	onA.close()

	var missed []string
	for i := each; i < 2*each; i++ {
		missed = append(missed, send(nodeB, i))
	}
	want := rowsAfter(last) // every event of ann's since: the messages and their notifications
	onB := openSSE(t, nodeB.URL, "/v1/stream", annKey, "Last-Event-ID", last)
	replayed := onB.events(t, len(want), 30*time.Second)
	if !slices.Equal(sseIDs(replayed), want) {
		t.Fatalf("after reconnecting to node B: ids %v, want exactly %v", sseIDs(replayed), want)
	}
	if !slices.Equal(sentIDs(t, replayed), missed) {
		t.Fatalf("after reconnecting to node B: messages %v, want %v", sentIDs(t, replayed), missed)
	}
	onB.quiet(t, 300*time.Millisecond)
	// Live again on node B, for messages sent through node A.
	var live []string
	for i := 2 * each; i < 3*each; i++ {
		live = append(live, send(nodeA, i))
	}
	if got := sentIDs(t, onB.untilSent(t, each, 30*time.Second)); !slices.Equal(got, live) {
		t.Fatalf("live on node B: %v, want %v", got, live)
	}
}

// TestStreamMessaging: members receive messages, edits, deletes, read
// markers and typing on their streams; a typing event is replayed only while
// it is fresh.
func TestStreamMessaging(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "ann", "bob", "cyril")
		ann, bob, cy := cs[0], cs[1], cs[2]
		conv := startConversation(t, s, bob, "", ann)
		annS, cyS := openSSE(t, s.URL, "/v1/stream", ann.key), openSSE(t, s.URL, "/v1/stream", cy.key)
		m := send(t, s, bob, conv.ID, "hello")
		got := annS.untilSent(t, 1, 10*time.Second)
		if ids := sentIDs(t, got); len(ids) != 1 || ids[0] != m.ID {
			t.Fatalf("ann received %v, want %s", ids, m.ID)
		}
		if r := api(t, s, http.MethodPost, "/v1/conversations/"+conv.ID+"/typing", bob.key, ""); r.Status/100 != 2 {
			t.Fatalf("typing: %d %s", r.Status, r.Body)
		}
		typing := annS.until(t, messaging.StreamTyping, 10*time.Second)
		var d map[string]string
		if err := json.Unmarshal([]byte(typing[len(typing)-1].Data), &d); err != nil || d["conversation_id"] != conv.ID || d["user_id"] != bob.ID {
			t.Fatalf("typing event %s (%v)", typing[len(typing)-1].Data, err)
		}
		cyS.quiet(t, 300*time.Millisecond) // not a member: nothing at all
		last := typing[len(typing)-1].ID
		annS.close()

		// Away: bob types, time passes, bob types again and writes.
		api(t, s, http.MethodPost, "/v1/conversations/"+conv.ID+"/typing", bob.key, "")
		s.Clock.Advance(stream.TypingTTL + time.Second)
		api(t, s, http.MethodPost, "/v1/conversations/"+conv.ID+"/typing", bob.key, "")
		m2 := send(t, s, bob, conv.ID, "are you there?")
		back := openSSE(t, s.URL, "/v1/stream", ann.key, "Last-Event-ID", last)
		replayed := back.untilSent(t, 1, 10*time.Second)
		if replayed[0].Event != messaging.StreamTyping {
			t.Fatalf("first replayed event is %s, want the fresh typing event (the stale one is left out)", replayed[0].Event)
		}
		for _, ev := range replayed[1:] {
			if ev.Event == messaging.StreamTyping {
				t.Fatalf("replayed a second typing event: %s", ev.Data)
			}
		}
		if ids := sentIDs(t, replayed); len(ids) != 1 || ids[0] != m2.ID {
			t.Fatalf("replayed messages %v, want %s", ids, m2.ID)
		}
	})
}
