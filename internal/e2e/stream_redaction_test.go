package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
)

// replayAll reconnects as key with Last-Event-ID 0 and returns everything
// the stream replays (and sends live) until it has been quiet for a second.
func replayAll(t testing.TB, s *apptest.Server, key string) string {
	t.Helper()
	c := openSSE(t, s.URL, "/v1/stream", key, "Last-Event-ID", "0")
	defer c.close()
	var all strings.Builder
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				return all.String()
			}
			if !m.Comment {
				all.WriteString(m.Event + " " + m.Data + "\n")
			}
		case <-time.After(time.Second):
			return all.String()
		}
	}
}

// A deleted message's text and an erased account's messages and name
// leave every place that quoted them: the stream's replay, the readers'
// notifications (in the centre and in the stream), and read receipts.
func TestStreamReplayForgetsDeletedAndErasedText(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "ann", "bob", "cat")
		ann, bob, cat := cs[0], cs[1], cs[2]
		g := startConversation(t, s, ann, "Club", bob, cat)
		gone := send(t, s, bob, g.ID, "zebradeleted words")
		api(t, s, "POST", "/v1/conversations/"+g.ID+"/read", ann.key, jsonBody(t, map[string]string{"message_id": gone.ID}))
		if r := api(t, s, "DELETE", "/v1/messages/"+gone.ID, bob.key, ""); r.Status != 204 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		afterDelete := replayAll(t, s, ann.key)
		if strings.Contains(afterDelete, "zebradeleted") {
			t.Errorf("the replay quotes a deleted message:\n%s", afterDelete)
		}
		if !strings.Contains(afterDelete, "message.deleted") || !strings.Contains(afterDelete, gone.ID) {
			t.Errorf("the replay lost the deletion itself:\n%s", afterDelete)
		}
		if n := api(t, s, "GET", "/v1/notifications", ann.key, ""); strings.Contains(string(n.Body), "zebradeleted") {
			t.Errorf("a notification quotes a deleted message: %s", n.Body)
		}

		send(t, s, bob, g.ID, "giraffeerased words")
		last := send(t, s, bob, g.ID, "okapi words")
		api(t, s, "POST", "/v1/conversations/"+g.ID+"/read", cat.key, jsonBody(t, map[string]string{"message_id": last.ID}))
		if n := api(t, s, "GET", "/v1/notifications", ann.key, ""); !strings.Contains(string(n.Body), "okapi") {
			t.Fatalf("ann was not notified of bob's message: %s", n.Body)
		}
		if r := api(t, s, "DELETE", "/v1/users/me", keyOf(t, s.App, bob.ID, "profile"), ""); r.Status != 204 {
			t.Fatalf("erase bob: %d %s", r.Status, r.Body)
		}
		words := []string{"zebradeleted", "giraffeerased", "okapi"}
		for _, who := range []chatter{ann, cat} {
			replay := replayAll(t, s, who.key)
			for _, w := range append(words, bob.FirstName) {
				if strings.Contains(replay, w) {
					t.Errorf("%s's replay holds %q after bob's erasure:\n%s", who.FirstName, w, replay)
				}
			}
			n := api(t, s, "GET", "/v1/notifications", who.key, "")
			for _, w := range append(words, bob.FirstName) {
				if strings.Contains(string(n.Body), w) {
					t.Errorf("%s's notifications hold %q after bob's erasure: %s", who.FirstName, w, n.Body)
				}
			}
		}
		rows, err := s.App.DB.QueryContext(context.Background(), `SELECT type, payload FROM outbox_events WHERE type = 'message.read'`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		reads := 0
		for rows.Next() {
			var kind, payload string
			if err := rows.Scan(&kind, &payload); err != nil {
				t.Fatal(err)
			}
			reads++
			for _, w := range words {
				if strings.Contains(payload, w) {
					t.Errorf("a %s event holds %q: %s", kind, w, payload)
				}
			}
		}
		if reads == 0 {
			t.Error("no message.read event was recorded")
		}
	})
}

// A conversation's messages are not replayed to someone who has left it,
// nor those of someone the caller has blocked since.
func TestStreamReplayFollowsMembershipAndBlocks(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "ann", "bob", "cat")
		ann, bob, cat := cs[0], cs[1], cs[2]
		g := startConversation(t, s, ann, "Club", bob, cat)
		left := startConversation(t, s, cat, "Padel", ann, bob)
		send(t, s, bob, g.ID, "quokka from bob")
		send(t, s, cat, g.ID, "kept from cat")
		send(t, s, cat, left.ID, "wombat in padel")
		before := replayAll(t, s, ann.key)
		for _, w := range []string{"quokka", "kept", "wombat"} {
			if !strings.Contains(before, w) {
				t.Fatalf("the replay misses %q before the block and the leave:\n%s", w, before)
			}
		}
		if r := api(t, s, "POST", "/v1/conversations/"+left.ID+"/leave", ann.key, ""); r.Status >= 300 {
			t.Fatalf("leave: %d %s", r.Status, r.Body)
		}
		blockVia(t, s, ann, bob)
		after := replayAll(t, s, ann.key)
		for _, w := range []string{"quokka", "wombat"} {
			if strings.Contains(after, w) {
				t.Errorf("the replay still holds %q:\n%s", w, after)
			}
		}
		if !strings.Contains(after, "kept from cat") {
			t.Errorf("the replay lost a message ann may still read:\n%s", after)
		}
		// Bob, blocked by ann, no longer gets her messages either.
		send(t, s, ann, g.ID, "hello cat")
		if replay := replayAll(t, s, bob.key); strings.Contains(replay, "hello cat") {
			t.Errorf("bob's stream holds a message of ann, who blocked him:\n%s", replay)
		}
	})
}
