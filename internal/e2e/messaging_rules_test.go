package e2e

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/httpapi"
	"github.com/matchpoint-api/matchpoint/internal/messaging"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
)

func blockVia(t testing.TB, s *apptest.Server, by, whom chatter) {
	t.Helper()
	if r := api(t, s, "PUT", "/v1/users/me/blocks/"+whom.ID, by.key, ""); r.Status != 200 {
		t.Fatalf("block: %d %s", r.Status, r.Body)
	}
}

func TestMessagingBlocks(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "ann", "bob", "cat")
		ann, bob, cat := cs[0], cs[1], cs[2]
		d := startConversation(t, s, ann, "", bob)
		g := startConversation(t, s, cat, "Club", ann, bob)
		send(t, s, bob, d.ID, "hello before")
		send(t, s, bob, g.ID, "bob in the group")
		send(t, s, cat, g.ID, "cat in the group")
		blockVia(t, s, ann, bob)
		// The direct conversation refuses new messages, both ways.
		wantProblem(t, s, api(t, s, "POST", "/v1/conversations/"+d.ID+"/messages", bob.key, `{"body":"hi?"}`), 403, "conversation_blocked", "")
		wantProblem(t, s, api(t, s, "POST", "/v1/conversations/"+d.ID+"/messages", ann.key, `{"body":"hi?"}`), 403, "conversation_blocked", "")
		// Nobody starts one with the other, or adds them to a group.
		wantProblem(t, s, api(t, s, "POST", "/v1/conversations", bob.key, jsonBody(t, map[string]any{"member_ids": []string{ann.ID}, "title": "Sneaky"})), 422, "unknown_user", "member_ids")
		// In the group, neither sees the other's messages, nor counts them unread.
		sent := send(t, s, bob, g.ID, "bob after the block")
		if got := bodies(history(t, s, ann, g.ID, nil).Data); !slices.Equal(got, []string{"cat in the group"}) {
			t.Fatalf("ann sees %v", got)
		}
		if c := conversation(t, s, ann, g.ID); c.UnreadCount != 1 || *c.LastMessage.Body != "cat in the group" {
			t.Fatalf("ann's group: unread %d last %v", c.UnreadCount, c.LastMessage)
		}
		annSees := send(t, s, ann, g.ID, "ann after the block")
		if got := bodies(history(t, s, bob, g.ID, nil).Data); slices.Contains(got, "ann after the block") || len(got) != 3 {
			t.Fatalf("bob sees %v", got)
		}
		if got := bodies(history(t, s, cat, g.ID, nil).Data); len(got) != 4 {
			t.Fatalf("cat sees %v", got)
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/messages/"+sent.ID, ann.key, ""), 404, "not_found", "")
		wantProblem(t, s, api(t, s, "POST", "/v1/conversations/"+g.ID+"/messages", ann.key, jsonBody(t, map[string]string{"body": "re", "reply_to": sent.ID})), 422, "unknown_message", "reply_to")
		if got := searchMessages(t, s, ann, url.Values{"q": {"bob"}}); len(got.Data) != 0 {
			t.Fatalf("ann finds %v", got.Data)
		}
		// Neither the stream nor the webhook audience carries it to the other.
		for _, e := range streamed(t, s, ann.ID, messaging.StreamSent) {
			if strings.Contains(e["message"].(map[string]any)["id"].(string), sent.ID) {
				t.Fatal("ann's stream has bob's message")
			}
		}
		if evs := recorded(t, s, outbox.MessageSent, annSees.ID); len(evs) != 1 || slices.Contains(evs[0].Audience, bob.ID) || !slices.Contains(evs[0].Audience, cat.ID) {
			t.Fatalf("audience of ann's message: %+v", evs)
		}
		// Unblocking lets the direct conversation go on.
		if r := api(t, s, "DELETE", "/v1/users/me/blocks/"+bob.ID, ann.key, ""); r.Status != 204 {
			t.Fatalf("unblock: %d", r.Status)
		}
		send(t, s, bob, d.ID, "hello again")
	})
}

func TestMessagingReadMarkers(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "ann", "bob", "cat")
		ann, bob, cat := cs[0], cs[1], cs[2]
		g := startConversation(t, s, ann, "Three", bob, cat)
		var ms []messaging.View
		for _, b := range []string{"one", "two", "three", "four"} {
			ms = append(ms, send(t, s, ann, g.ID, b))
		}
		reply(t, s, cat, g.ID, ms[0].ID, "a reply")
		if c := conversation(t, s, bob, g.ID); c.UnreadCount != 5 {
			t.Fatalf("bob unread %d, want 5", c.UnreadCount)
		}
		if c := conversation(t, s, ann, g.ID); c.UnreadCount != 1 {
			t.Fatalf("ann unread %d, want 1 (her own do not count)", c.UnreadCount)
		}
		m := decode[httpapi.ConversationMember](t, api(t, s, "POST", "/v1/conversations/"+g.ID+"/read", bob.key, jsonBody(t, map[string]string{"message_id": ms[2].ID})), 200)
		if *m.LastReadMessageID != ms[2].ID || m.LastReadAt == nil {
			t.Fatalf("marker: %+v", m)
		}
		if c := conversation(t, s, bob, g.ID); c.UnreadCount != 2 {
			t.Fatalf("bob unread %d, want 2", c.UnreadCount)
		}
		// Never back.
		m = decode[httpapi.ConversationMember](t, api(t, s, "POST", "/v1/conversations/"+g.ID+"/read", bob.key, jsonBody(t, map[string]string{"message_id": ms[0].ID})), 200)
		if *m.LastReadMessageID != ms[2].ID {
			t.Fatalf("marker moved back: %+v", m)
		}
		// Members see who read up to where.
		c := conversation(t, s, cat, g.ID)
		i := slices.IndexFunc(c.Members, func(m httpapi.ConversationMember) bool { return m.UserID == bob.ID })
		if c.Members[i].LastReadMessageID == nil || *c.Members[i].LastReadMessageID != ms[2].ID {
			t.Fatalf("cat sees bob's marker %+v", c.Members[i])
		}
		// A deleted message no longer counts.
		api(t, s, "DELETE", "/v1/messages/"+ms[3].ID, ann.key, "")
		if c := conversation(t, s, bob, g.ID); c.UnreadCount != 1 {
			t.Fatalf("bob unread %d after a delete, want 1", c.UnreadCount)
		}
		// message.read once per move, to the members; on their streams too.
		evs := recorded(t, s, outbox.MessageRead, ms[2].ID)
		if len(evs) != 1 || len(evs[0].Audience) != 3 {
			t.Fatalf("message.read: %+v", evs)
		}
		if d := eventData(t, evs[0])["message"]; d["read_by"] != bob.ID || d["id"] != ms[2].ID || d["read_at"] == nil {
			t.Fatalf("message.read data %v", d)
		}
		if got := streamed(t, s, ann.ID, messaging.StreamRead); len(got) != 1 || got[0]["user_id"] != bob.ID || got[0]["message_id"] != ms[2].ID {
			t.Fatalf("ann's stream: %v", got)
		}
		wantProblem(t, s, api(t, s, "POST", "/v1/conversations/"+g.ID+"/read", bob.key, `{"message_id":"msg_nothing"}`), 422, "unknown_message", "message_id")
	})
}

func TestMessagingSearch(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "ann", "bob", "cat", "dan")
		ann, bob, cat, dan := cs[0], cs[1], cs[2], cs[3]
		d := startConversation(t, s, ann, "", bob)
		g := startConversation(t, s, ann, "Club", bob, cat)
		other := startConversation(t, s, cat, "", dan)
		send(t, s, ann, d.ID, "Shall we play tennis on Sunday?")
		s.Clock.Advance(time.Hour)
		mid := s.Clock.Now()
		best := send(t, s, bob, g.ID, "Tennis <3 tennis and more tennis")
		send(t, s, cat, g.ID, "I prefer running")
		send(t, s, cat, other.ID, "tennis with dan only")
		r := searchMessages(t, s, ann, url.Values{"q": {"Tennis"}})
		if len(r.Data) != 2 || r.Data[0].Message.ID != best.ID || r.Data[0].ConversationID != g.ID {
			t.Fatalf("ann's search: %+v", r.Data)
		}
		if sn := r.Data[0].Snippet; !strings.Contains(sn, "<mark>Tennis</mark>") || !strings.Contains(sn, "&lt;3") {
			t.Fatalf("snippet %q", sn)
		}
		// Stems match; every word must.
		if r := searchMessages(t, s, ann, url.Values{"q": {"played sunday"}}); len(r.Data) != 1 {
			t.Fatalf("stemmed: %+v", r.Data)
		}
		if r := searchMessages(t, s, ann, url.Values{"q": {"tennis", "running"}, "conversation_id": {g.ID}}); len(r.Data) != 1 {
			t.Fatalf("conversation filter: %+v", r.Data)
		}
		if r := searchMessages(t, s, ann, url.Values{"q": {"tennis"}, "from": {at(mid)}}); len(r.Data) != 1 || r.Data[0].Message.ID != best.ID {
			t.Fatalf("from: %+v", r.Data)
		}
		if r := searchMessages(t, s, ann, url.Values{"q": {"tennis"}, "to": {at(mid)}}); len(r.Data) != 1 || r.Data[0].ConversationID != d.ID {
			t.Fatalf("to: %+v", r.Data)
		}
		p := searchMessages(t, s, ann, url.Values{"q": {"tennis"}, "limit": {"1"}})
		p2 := searchMessages(t, s, ann, url.Values{"q": {"tennis"}, "limit": {"1"}, "cursor": {p.NextCursor}})
		if !p.HasMore || len(p2.Data) != 1 || p2.HasMore || p2.Data[0].Message.ID == p.Data[0].Message.ID {
			t.Fatalf("pages: %+v %+v", p, p2)
		}
		// After leaving, the group's messages are not found any more.
		api(t, s, "POST", "/v1/conversations/"+g.ID+"/leave", bob.key, "")
		if r := searchMessages(t, s, bob, url.Values{"q": {"tennis"}}); len(r.Data) != 1 || r.Data[0].ConversationID != d.ID {
			t.Fatalf("after leaving: %+v", r.Data)
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/messages/search?q=tennis&conversation_id="+g.ID, bob.key, ""), 404, "not_found", "")
		wantProblem(t, s, api(t, s, "GET", "/v1/messages/search?q=%20%2B%2B", ann.key, ""), 422, "invalid_query", "q")
		wantProblem(t, s, api(t, s, "GET", "/v1/messages/search?q=a+b+c+d+e+f+g+h+i+j+k", ann.key, ""), 422, "invalid_query", "q")
		wantProblem(t, s, api(t, s, "GET", "/v1/messages/search?q=x&cursor=zz", ann.key, ""), 422, "invalid_cursor", "cursor")
		wantProblem(t, s, api(t, s, "GET", "/v1/messages/search?q=x&from="+at(mid)+"&to="+at(mid), ann.key, ""), 422, "invalid_date_range", "to")
		// A word the engine ignores (PostgreSQL's stop words) finds no
		// message that lacks it: never the whole conversation.
		for _, f := range searchMessages(t, s, ann, url.Values{"q": {"the"}}).Data {
			if !strings.Contains(strings.ToLower(*f.Message.Body), "the") {
				t.Fatalf("q=the found %q", *f.Message.Body)
			}
		}
		// FTS syntax in the words is only words.
		if r := searchMessages(t, s, ann, url.Values{"q": {`"tennis" OR conversation_id:*`}}); len(r.Data) != 0 {
			t.Fatalf("syntax: %+v", r.Data)
		}
	})
}

func TestMessagingErasure(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "ann", "bob", "cat")
		ann, bob, cat := cs[0], cs[1], cs[2]
		g := startConversation(t, s, ann, "Club", bob, cat)
		gone := send(t, s, bob, g.ID, "my unique words")
		reply(t, s, ann, g.ID, gone.ID, "answer")
		api(t, s, "POST", "/v1/conversations/"+g.ID+"/read", bob.key, jsonBody(t, map[string]string{"message_id": gone.ID}))
		if r := api(t, s, "DELETE", "/v1/users/me", keyOf(t, s.App, bob.ID, "profile"), ""); r.Status != 204 {
			t.Fatalf("delete account: %d %s", r.Status, r.Body)
		}
		m := decode[messaging.View](t, api(t, s, "GET", "/v1/messages/"+gone.ID, ann.key, ""), 200)
		if !m.Deleted || !m.SenderDeleted || m.Body != nil || m.ReplyCount != 1 {
			t.Fatalf("tombstone: %+v", m)
		}
		c := conversation(t, s, cat, g.ID)
		if len(c.Members) != 2 || slices.ContainsFunc(c.Members, func(m httpapi.ConversationMember) bool { return m.UserID == bob.ID }) {
			t.Fatalf("members after erasure: %+v", c.Members)
		}
		var n int
		if err := s.App.DB.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM conversation_members
			WHERE user_id = $1 AND (read_message_id IS NOT NULL OR read_at IS NOT NULL OR read_seq <> 0 OR left_at IS NULL)`, bob.ID).Scan(&n); err != nil || n != 0 {
			t.Fatalf("bob's memberships keep %d markers (%v)", n, err)
		}
		if r := searchMessages(t, s, ann, url.Values{"q": {"unique"}}); len(r.Data) != 0 {
			t.Fatalf("erased words found: %+v", r.Data)
		}
		// Nobody starts a conversation with the erased account.
		wantProblem(t, s, api(t, s, "POST", "/v1/conversations", ann.key, jsonBody(t, map[string]any{"member_ids": []string{bob.ID}})), 422, "unknown_user", "member_ids")
	})
}

func TestMessagingStreamAndNotifications(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "ann", "bob", "cat")
		ann, bob, cat := cs[0], cs[1], cs[2]
		g := startConversation(t, s, ann, "Club", bob, cat)
		if got := streamed(t, s, bob.ID, messaging.StreamUpdated); len(got) != 1 || got[0]["change"] != "created" {
			t.Fatalf("bob's stream: %v", got)
		}
		m := send(t, s, ann, g.ID, "Hello club")
		for _, u := range []chatter{ann, bob, cat} {
			got := streamed(t, s, u.ID, messaging.StreamSent)
			if len(got) != 1 || got[0]["message"].(map[string]any)["id"] != m.ID || got[0]["message"].(map[string]any)["body"] != "Hello club" {
				t.Fatalf("%s's stream: %v", u.Username, got)
			}
		}
		// message.sent carries the message to every member.
		evs := recorded(t, s, outbox.MessageSent, m.ID)
		if len(evs) != 1 || len(evs[0].Audience) != 3 {
			t.Fatalf("message.sent: %+v", evs)
		}
		if d := eventData(t, evs[0])["message"]; d["text"] != "Hello club" || d["conversation_id"] != g.ID || d["sender_id"] != ann.ID {
			t.Fatalf("message.sent data %v", d)
		}
		// Typing reaches the others, not the typist.
		if r := api(t, s, "POST", "/v1/conversations/"+g.ID+"/typing", bob.key, ""); r.Status != 204 {
			t.Fatalf("typing: %d %s", r.Status, r.Body)
		}
		if got := streamed(t, s, ann.ID, messaging.StreamTyping); len(got) != 1 || got[0]["user_id"] != bob.ID {
			t.Fatalf("typing on ann's stream: %v", got)
		}
		if got := streamed(t, s, bob.ID, messaging.StreamTyping); len(got) != 0 {
			t.Fatalf("typing on bob's own stream: %v", got)
		}
		// Renames reach every member.
		api(t, s, "PATCH", "/v1/conversations/"+g.ID, ann.key, `{"title":"Club 2"}`)
		if got := streamed(t, s, cat.ID, messaging.StreamUpdated); len(got) != 2 || got[1]["title"] != "Club 2" {
			t.Fatalf("cat's updates: %v", got)
		}
		// The others are notified, one notification per conversation while unread.
		send(t, s, ann, g.ID, "Second")
		ns := apptest.Notifications(t, s.App.DB, bob.ID, notify.KindMessage)
		if len(ns) != 1 || ns[0].Data["conversation_id"] != g.ID || ns[0].Title != "ann in Club 2" || ns[0].Body != "Second" {
			t.Fatalf("bob's notifications: %+v", ns)
		}
		if ns := apptest.Notifications(t, s.App.DB, ann.ID, notify.KindMessage); len(ns) != 0 {
			t.Fatalf("the sender is notified: %+v", ns)
		}
		// Muted: kept in the centre, neither pushed nor mailed.
		readAll := func() {
			for _, u := range []chatter{ann, bob} {
				if r := api(t, s, "POST", "/v1/notifications/read", u.key, `{}`); r.Status != 200 {
					t.Fatalf("read notifications: %d %s", r.Status, r.Body)
				}
			}
		}
		for _, u := range []chatter{ann, bob} {
			decode[map[string]any](t, api(t, s, "PATCH", "/v1/users/me/notification-settings", u.key, `{"kinds":{"message.new":{"email":true}}}`), 200)
		}
		readAll()
		api(t, s, "PUT", "/v1/conversations/"+g.ID+"/mute", bob.key, jsonBody(t, map[string]string{"until": at(s.Clock.Now().Add(time.Hour))}))
		jobs := s.PendingNotificationJobs(t)
		send(t, s, cat, g.ID, "Anyone?")
		if got := s.PendingNotificationJobs(t) - jobs; got != 1 {
			t.Fatalf("%d jobs queued, want 1 (ann's email; bob muted)", got)
		}
		if ns := apptest.Notifications(t, s.App.DB, bob.ID, notify.KindMessage); len(ns) != 2 || ns[1].Body != "Anyone?" {
			t.Fatalf("bob's centre while muted: %+v", ns)
		}
		// The mute ends on its own.
		s.Clock.Advance(2 * time.Hour)
		readAll()
		jobs = s.PendingNotificationJobs(t)
		send(t, s, cat, g.ID, "Still there?")
		if got := s.PendingNotificationJobs(t) - jobs; got != 2 {
			t.Fatalf("%d jobs queued after the mute, want 2", got)
		}
	})
}
