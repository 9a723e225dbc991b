package e2e

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/messaging"
	"github.com/matchpoint-api/matchpoint/internal/stream"
)

// messagingEvents reads n events of the messaging kinds, skipping the
// notifications the same messages cause.
func messagingEvents(t testing.TB, c *sse, n int) []stream.Message {
	t.Helper()
	var out []stream.Message
	for len(out) < n {
		for _, m := range c.events(t, 1, 30*time.Second) {
			if m.Event != stream.KindNotification {
				out = append(out, m)
			}
		}
	}
	return out
}

// streamedMessage decodes data.message of a message.* stream event.
func streamedMessage(t testing.TB, m stream.Message) messaging.View {
	t.Helper()
	var d struct{ Message messaging.View }
	if err := json.Unmarshal([]byte(m.Data), &d); err != nil {
		t.Fatalf("%s: %v: %s", m.Event, err, m.Data)
	}
	return d.Message
}

// TestMessagingOverTheStream: a member's open stream receives the
// conversation's messages, edits, deletes, read markers and typing, as the
// API shows them; someone outside the conversation receives none of it.
func TestMessagingOverTheStream(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "ann", "bob", "eve")
		ann, bob, eve := cs[0], cs[1], cs[2]
		onBob := openSSE(t, s.URL, "/v1/stream", bob.key)
		onEve := openSSE(t, s.URL, "/v1/stream", eve.key)
		g := startConversation(t, s, ann, "Club", bob)
		m := send(t, s, ann, g.ID, "Court 3 at ten")
		decode[messaging.View](t, api(t, s, "PATCH", "/v1/messages/"+m.ID, ann.key, `{"body":"Court 4 at ten"}`), 200)
		api(t, s, "POST", "/v1/conversations/"+g.ID+"/typing", ann.key, "")
		api(t, s, "POST", "/v1/conversations/"+g.ID+"/read", ann.key, jsonBody(t, map[string]string{"message_id": m.ID}))
		// Deleting a message blanks the stream rows that still carry its
		// text: Bob reads the first four before it goes.
		got := messagingEvents(t, onBob, 4)
		api(t, s, "DELETE", "/v1/messages/"+m.ID, ann.key, "")
		got = append(got, messagingEvents(t, onBob, 1)...)
		var kinds []string
		for _, e := range got {
			kinds = append(kinds, e.Event)
		}
		// Ann's marker was already at her own message: no message.read.
		if !slices.Equal(kinds, []string{messaging.StreamUpdated, messaging.StreamSent, messaging.StreamEdited, messaging.StreamTyping, messaging.StreamDeleted}) {
			t.Fatalf("bob received %v", kinds)
		}
		if v := streamedMessage(t, got[1]); v.ID != m.ID || v.Body == nil || *v.Body != "Court 3 at ten" || v.ConversationID != g.ID {
			t.Fatalf("message.sent: %+v", v)
		}
		if v := streamedMessage(t, got[2]); v.Body == nil || *v.Body != "Court 4 at ten" || v.EditedAt == nil {
			t.Fatalf("message.edited: %+v", v)
		}
		if v := streamedMessage(t, got[4]); !v.Deleted || v.Body != nil {
			t.Fatalf("message.deleted: %+v", v)
		}
		api(t, s, "POST", "/v1/conversations/"+g.ID+"/read", bob.key, jsonBody(t, map[string]string{"message_id": m.ID}))
		onAnn := openSSE(t, s.URL, "/v1/stream", ann.key, "Last-Event-ID", "0")
		var read []stream.Message
		for _, e := range messagingEvents(t, onAnn, 4) { // sent, edited, deleted, read
			if e.Event == messaging.StreamRead {
				read = append(read, e)
			}
		}
		var rs messaging.ReadState
		if len(read) != 1 || json.Unmarshal([]byte(read[0].Data), &rs) != nil || rs.UserID != bob.ID || rs.MessageID != m.ID {
			t.Fatalf("ann's message.read: %+v", read)
		}
		onEve.quiet(t, 300*time.Millisecond)
	})
}
