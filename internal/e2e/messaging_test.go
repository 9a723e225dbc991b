package e2e

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/httpapi"
	"github.com/matchpoint-api/matchpoint/internal/messaging"
)

func TestConversationsDirectAndGroup(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "ann", "bob", "cat", "dan")
		ann, bob, cat, dan := cs[0], cs[1], cs[2], cs[3]
		d := startConversation(t, s, ann, "", bob)
		if !strings.HasPrefix(d.ID, "cnv_") || d.Type != "direct" || d.Title != nil || len(d.Members) != 2 || d.Me.UserID != ann.ID || d.LastMessage != nil {
			t.Fatalf("direct: %+v", d)
		}
		// The same pair always gets the same conversation, whoever asks.
		r := api(t, s, "POST", "/v1/conversations", bob.key, jsonBody(t, map[string]any{"member_ids": []string{ann.ID}}))
		if again := decode[httpapi.Conversation](t, r, 200); again.ID != d.ID {
			t.Fatalf("second direct %s, want %s", again.ID, d.ID)
		}
		g := startConversation(t, s, ann, "  Sunday doubles ", bob, cat)
		if g.Type != "group" || *g.Title != "Sunday doubles" || len(g.Members) != 3 || g.Me.Role != "admin" {
			t.Fatalf("group: %+v", g)
		}
		for _, c := range []struct {
			body        map[string]any
			status      int
			code, param string
		}{
			{map[string]any{"member_ids": []string{bob.ID, cat.ID}}, 422, "direct_needs_one", "member_ids"},
			{map[string]any{"member_ids": []string{ann.ID}}, 422, "direct_needs_one", "member_ids"},
			{map[string]any{"member_ids": []string{"usr_nobody"}}, 422, "unknown_user", "member_ids"},
			{map[string]any{"member_ids": []string{bob.ID}, "title": "  "}, 422, "validation_failed", "title"},
			{map[string]any{"member_ids": []string{bob.ID}, "title": "a\nb"}, 422, "invalid_text", "title"},
			{map[string]any{"member_ids": []string{}}, 422, "validation_failed", "member_ids"},
		} {
			wantProblem(t, s, api(t, s, "POST", "/v1/conversations", ann.key, jsonBody(t, c.body)), c.status, c.code, c.param)
		}
		// Scopes: writing needs write, reading read.
		wantProblem(t, s, api(t, s, "POST", "/v1/conversations", keyOf(t, s.App, ann.ID, "read"), jsonBody(t, map[string]any{"member_ids": []string{bob.ID}})), 403, "insufficient_scope", "")
		wantProblem(t, s, api(t, s, "GET", "/v1/conversations", keyOf(t, s.App, ann.ID, "write"), ""), 403, "insufficient_scope", "")

		// Only admins change a group.
		wantProblem(t, s, api(t, s, "PATCH", "/v1/conversations/"+g.ID, bob.key, `{"title":"Mine"}`), 403, "not_admin", "")
		wantProblem(t, s, api(t, s, "POST", "/v1/conversations/"+g.ID+"/members", bob.key, jsonBody(t, map[string]any{"user_ids": []string{dan.ID}})), 403, "not_admin", "")
		wantProblem(t, s, api(t, s, "PATCH", "/v1/conversations/"+d.ID, ann.key, `{"title":"Duo"}`), 409, "not_a_group", "")
		wantProblem(t, s, api(t, s, "POST", "/v1/conversations/"+d.ID+"/leave", ann.key, ""), 409, "not_a_group", "")
		if c := decode[httpapi.Conversation](t, api(t, s, "PATCH", "/v1/conversations/"+g.ID, ann.key, `{"title":"Doubles"}`), 200); *c.Title != "Doubles" {
			t.Fatalf("renamed: %+v", c)
		}
		send(t, s, ann, g.ID, "before dan")
		c := decode[httpapi.Conversation](t, api(t, s, "POST", "/v1/conversations/"+g.ID+"/members", ann.key, jsonBody(t, map[string]any{"user_ids": []string{dan.ID, bob.ID}})), 200)
		if len(c.Members) != 4 {
			t.Fatalf("members after add: %+v", c.Members)
		}
		// A newcomer reads the history, none of it unread.
		if dc := conversation(t, s, dan, g.ID); dc.UnreadCount != 0 || len(history(t, s, dan, g.ID, nil).Data) != 1 {
			t.Fatalf("newcomer: %+v", dc)
		}
		// Removal: the person removed gets 404 from then on.
		if r := api(t, s, "DELETE", "/v1/conversations/"+g.ID+"/members/"+dan.ID, ann.key, ""); r.Status != 204 {
			t.Fatalf("remove: %d %s", r.Status, r.Body)
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/conversations/"+g.ID, dan.key, ""), 404, "not_found", "")
		wantProblem(t, s, api(t, s, "DELETE", "/v1/conversations/"+g.ID+"/members/"+dan.ID, ann.key, ""), 404, "not_found", "")
		// Roles: the last admin cannot step down; when they leave, the
		// longest-standing member becomes admin.
		wantProblem(t, s, api(t, s, "PATCH", "/v1/conversations/"+g.ID+"/members/"+ann.ID, ann.key, `{"role":"member"}`), 409, "last_admin", "role")
		if r := api(t, s, "POST", "/v1/conversations/"+g.ID+"/leave", ann.key, ""); r.Status != 204 {
			t.Fatalf("leave: %d %s", r.Status, r.Body)
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/conversations/"+g.ID, ann.key, ""), 404, "not_found", "")
		after := conversation(t, s, bob, g.ID)
		if len(after.Members) != 2 || after.Me.Role != "admin" {
			t.Fatalf("after the admin left: %+v", after)
		}
		// List: most recent activity first, paged.
		s.Clock.Advance(time.Second)
		send(t, s, bob, d.ID, "latest")
		l := decode[httpapi.List[httpapi.Conversation]](t, api(t, s, "GET", "/v1/conversations?limit=1", bob.key, ""), 200)
		if len(l.Data) != 1 || l.Data[0].ID != d.ID || !l.HasMore || *l.Data[0].LastMessage.Body != "latest" {
			t.Fatalf("list page 1: %+v", l)
		}
		l = decode[httpapi.List[httpapi.Conversation]](t, api(t, s, "GET", "/v1/conversations?limit=1&cursor="+url.QueryEscape(l.NextCursor), bob.key, ""), 200)
		if len(l.Data) != 1 || l.Data[0].ID != g.ID || l.HasMore {
			t.Fatalf("list page 2: %+v", l)
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/conversations?cursor=nope", bob.key, ""), 422, "invalid_cursor", "cursor")
		// Mute until a time.
		m := decode[httpapi.ConversationMember](t, api(t, s, "PUT", "/v1/conversations/"+d.ID+"/mute", bob.key,
			jsonBody(t, map[string]string{"until": at(s.Clock.Now().Add(time.Hour))})), 200)
		if m.MutedUntil == nil {
			t.Fatalf("mute: %+v", m)
		}
		wantProblem(t, s, api(t, s, "PUT", "/v1/conversations/"+d.ID+"/mute", bob.key, jsonBody(t, map[string]string{"until": at(s.Clock.Now().Add(-time.Hour))})), 422, "validation_failed", "until")
		if m := decode[httpapi.ConversationMember](t, api(t, s, "DELETE", "/v1/conversations/"+d.ID+"/mute", bob.key, ""), 200); m.MutedUntil != nil {
			t.Fatalf("unmute: %+v", m)
		}
	})
}

// TestConversationNonMembers404 checks that someone outside a conversation
// gets 404 for it and everything in it, as for one that does not exist.
func TestConversationNonMembers404(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "ann", "bob", "eve")
		ann, bob, eve := cs[0], cs[1], cs[2]
		c := startConversation(t, s, ann, "", bob)
		m := send(t, s, ann, c.ID, "secret plans")
		for _, r := range []struct{ method, path, body string }{
			{"GET", "/v1/conversations/" + c.ID, ""},
			{"PATCH", "/v1/conversations/" + c.ID, `{"title":"x"}`},
			{"GET", "/v1/conversations/" + c.ID + "/messages", ""},
			{"POST", "/v1/conversations/" + c.ID + "/messages", `{"body":"hi"}`},
			{"POST", "/v1/conversations/" + c.ID + "/read", jsonBody(t, map[string]string{"message_id": m.ID})},
			{"POST", "/v1/conversations/" + c.ID + "/typing", ""},
			{"POST", "/v1/conversations/" + c.ID + "/leave", ""},
			{"POST", "/v1/conversations/" + c.ID + "/members", jsonBody(t, map[string]any{"user_ids": []string{eve.ID}})},
			{"DELETE", "/v1/conversations/" + c.ID + "/members/" + ann.ID, ""},
			{"PUT", "/v1/conversations/" + c.ID + "/mute", jsonBody(t, map[string]string{"until": at(s.Clock.Now().Add(time.Hour))})},
			{"GET", "/v1/messages/" + m.ID, ""},
			{"PATCH", "/v1/messages/" + m.ID, `{"body":"mine now"}`},
			{"DELETE", "/v1/messages/" + m.ID, ""},
			{"GET", "/v1/messages/" + m.ID + "/thread", ""},
			{"GET", "/v1/messages/search?conversation_id=" + c.ID + "&q=secret", ""},
			{"GET", "/v1/conversations/cnv_nothing", ""},
		} {
			t.Run(r.method+" "+r.path, func(t *testing.T) {
				wantProblem(t, s, api(t, s, r.method, r.path, eve.key, r.body), 404, "not_found", "")
			})
		}
		if got := searchMessages(t, s, eve, url.Values{"q": {"secret"}}); len(got.Data) != 0 {
			t.Fatalf("eve found %+v", got.Data)
		}
	})
}

func TestMessagesThreadsEditDelete(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "ann", "bob")
		ann, bob := cs[0], cs[1]
		c := startConversation(t, s, ann, "", bob)
		root := send(t, s, ann, c.ID, "  Court 3 at ten?  ")
		if *root.Body != "Court 3 at ten?" || root.SenderID != ann.ID || root.ReplyTo != nil || root.Deleted {
			t.Fatalf("root: %+v", root)
		}
		r1 := reply(t, s, bob, c.ID, root.ID, "Yes")
		// A reply to a reply joins the same thread: one level deep.
		r2 := reply(t, s, ann, c.ID, r1.ID, "Great")
		if *r1.ReplyTo != root.ID || *r2.ReplyTo != root.ID {
			t.Fatalf("reply_to: %v %v", *r1.ReplyTo, *r2.ReplyTo)
		}
		send(t, s, bob, c.ID, "top level again")
		for _, id := range []string{root.ID, r2.ID} {
			th := decode[httpapi.MessageList](t, api(t, s, "GET", "/v1/messages/"+id+"/thread", bob.key, ""), 200)
			if got := bodies(th.Data); !slices.Equal(got, []string{"Court 3 at ten?", "Yes", "Great"}) {
				t.Fatalf("thread of %s: %v", id, got)
			}
		}
		th := decode[httpapi.MessageList](t, api(t, s, "GET", "/v1/messages/"+root.ID+"/thread?limit=2", bob.key, ""), 200)
		th2 := decode[httpapi.MessageList](t, api(t, s, "GET", "/v1/messages/"+root.ID+"/thread?after="+th.NextCursor, bob.key, ""), 200)
		if !th.HasMore || len(th2.Data) != 1 || *th2.Data[0].Body != "Great" {
			t.Fatalf("thread pages: %+v / %+v", th, th2)
		}
		// History shows top-level messages; the root counts its replies.
		h := history(t, s, bob, c.ID, nil)
		if got := bodies(h.Data); !slices.Equal(got, []string{"top level again", "Court 3 at ten?"}) || h.Data[1].ReplyCount != 2 || h.Data[1].LastReplyAt == nil {
			t.Fatalf("history: %v %+v", got, h.Data)
		}
		wantProblem(t, s, api(t, s, "POST", "/v1/conversations/"+c.ID+"/messages", ann.key, `{"body":"x","reply_to":"msg_nothing"}`), 422, "unknown_message", "reply_to")
		other := startConversation(t, s, ann, "Elsewhere", bob)
		wantProblem(t, s, api(t, s, "POST", "/v1/conversations/"+other.ID+"/messages", ann.key, jsonBody(t, map[string]string{"body": "x", "reply_to": root.ID})), 422, "unknown_message", "reply_to")
		// Bodies: 1..4000 characters after trimming, no control characters.
		wantProblem(t, s, api(t, s, "POST", "/v1/conversations/"+c.ID+"/messages", ann.key, `{"body":"   "}`), 422, "validation_failed", "body")
		wantProblem(t, s, api(t, s, "POST", "/v1/conversations/"+c.ID+"/messages", ann.key, jsonBody(t, map[string]string{"body": strings.Repeat("é", 4001)})), 422, "too_long", "body")
		wantProblem(t, s, api(t, s, "POST", "/v1/conversations/"+c.ID+"/messages", ann.key, `{"body":"a\u0007b"}`), 422, "invalid_text", "body")
		send(t, s, ann, c.ID, strings.Repeat("é", 4000)+"  ")

		// Edit: the sender only; edited_at kept.
		s.Clock.Advance(time.Minute)
		e := decode[messaging.View](t, api(t, s, "PATCH", "/v1/messages/"+root.ID, ann.key, `{"body":"Court 4 at ten?"}`), 200)
		if *e.Body != "Court 4 at ten?" || e.EditedAt == nil || e.CreatedAt != root.CreatedAt {
			t.Fatalf("edited: %+v", e)
		}
		wantProblem(t, s, api(t, s, "PATCH", "/v1/messages/"+root.ID, bob.key, `{"body":"mine"}`), 403, "not_sender", "")
		wantProblem(t, s, api(t, s, "DELETE", "/v1/messages/"+root.ID, bob.key, ""), 403, "not_sender", "")
		// Delete: a tombstone keeps its place and its thread.
		if r := api(t, s, "DELETE", "/v1/messages/"+root.ID, ann.key, ""); r.Status != 204 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		if r := api(t, s, "DELETE", "/v1/messages/"+root.ID, ann.key, ""); r.Status != 204 {
			t.Fatalf("delete again: %d %s", r.Status, r.Body)
		}
		g := decode[messaging.View](t, api(t, s, "GET", "/v1/messages/"+root.ID, bob.key, ""), 200)
		if !g.Deleted || g.Body != nil || g.DeletedAt == nil || g.ReplyCount != 2 {
			t.Fatalf("tombstone: %+v", g)
		}
		if th := decode[httpapi.MessageList](t, api(t, s, "GET", "/v1/messages/"+r1.ID+"/thread", bob.key, ""), 200); len(th.Data) != 3 || !th.Data[0].Deleted {
			t.Fatalf("thread after delete: %+v", th.Data)
		}
		wantProblem(t, s, api(t, s, "PATCH", "/v1/messages/"+root.ID, ann.key, `{"body":"back"}`), 409, "message_deleted", "")
		if got := searchMessages(t, s, bob, url.Values{"q": {"court"}}); len(got.Data) != 0 {
			t.Fatalf("a deleted message is found: %+v", got.Data)
		}
		// Edits and deletes reach the members' streams.
		if ed, del := streamed(t, s, bob.ID, messaging.StreamEdited), streamed(t, s, bob.ID, messaging.StreamDeleted); len(ed) != 1 || len(del) != 1 {
			t.Fatalf("stream: edited %v deleted %v", ed, del)
		}
	})
}

// TestMessagesPaginationWhileSending pages a conversation both ways while
// messages keep arriving: every message is seen exactly once.
func TestMessagesPaginationWhileSending(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "ann", "bob")
		ann, bob := cs[0], cs[1]
		c := startConversation(t, s, ann, "", bob)
		var sent []string
		say := func(n int) {
			for range n {
				sent = append(sent, send(t, s, ann, c.ID, "m"+strconv.Itoa(len(sent))).ID)
			}
		}
		say(23)
		// Newest first, backwards, with sends between pages.
		var seen []string
		q := url.Values{"limit": {"5"}}
		first := ""
		for {
			p := history(t, s, bob, c.ID, q)
			for _, m := range p.Data {
				seen = append(seen, m.ID)
			}
			if first == "" {
				first = p.Data[0].ID
			}
			say(2)
			if !p.HasMore {
				break
			}
			q.Set("before", p.NextCursor)
		}
		slices.Reverse(seen)
		if !slices.Equal(seen, sent[:23]) {
			t.Fatalf("backwards pages saw %d messages, want the first 23 in order", len(seen))
		}
		// Forwards from the newest seen at the start, oldest first, still
		// with sends between pages, until caught up.
		var newer []string
		q = url.Values{"limit": {"4"}, "order": {"asc"}, "after": {first}}
		for i := 0; ; i++ {
			p := history(t, s, bob, c.ID, q)
			for _, m := range p.Data {
				newer = append(newer, m.ID)
			}
			if i < 3 {
				say(1)
			}
			if !p.HasMore && i >= 3 {
				break
			}
			if len(p.Data) > 0 {
				q.Set("after", p.Data[len(p.Data)-1].ID)
			}
		}
		if !slices.Equal(newer, sent[23:]) {
			t.Fatalf("forward pages saw %d, want %d in order", len(newer), len(sent)-23)
		}
		// after in newest-first order gives the messages right after the cursor.
		p := history(t, s, bob, c.ID, url.Values{"limit": {"3"}, "after": {sent[0]}})
		if len(p.Data) != 3 || p.Data[0].ID != sent[3] || p.Data[2].ID != sent[1] {
			t.Fatalf("after, desc: %v", bodies(p.Data))
		}
		p = history(t, s, bob, c.ID, url.Values{"limit": {"2"}, "order": {"asc"}, "before": {sent[5]}})
		if len(p.Data) != 2 || p.Data[0].ID != sent[3] || p.Data[1].ID != sent[4] {
			t.Fatalf("before, asc: %v", bodies(p.Data))
		}
		p = history(t, s, bob, c.ID, url.Values{"limit": {"2"}, "order": {"asc"}})
		if p.Data[0].ID != sent[0] || p.NextCursor != sent[1] {
			t.Fatalf("asc from the start: %v %s", bodies(p.Data), p.NextCursor)
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/conversations/"+c.ID+"/messages?before="+sent[1]+"&after="+sent[0], bob.key, ""), 422, "invalid_cursor", "after")
		wantProblem(t, s, api(t, s, "GET", "/v1/conversations/"+c.ID+"/messages?before=x", bob.key, ""), 422, "invalid_cursor", "before")
		other := startConversation(t, s, ann, "Other", bob)
		om := send(t, s, ann, other.ID, "elsewhere")
		wantProblem(t, s, api(t, s, "GET", "/v1/conversations/"+c.ID+"/messages?after="+om.ID, bob.key, ""), 422, "invalid_cursor", "after")
	})
}

func TestMessageIdempotentSend(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "ann", "bob")
		ann, bob := cs[0], cs[1]
		c := startConversation(t, s, ann, "", bob)
		body := `{"body":"only once"}`
		r1 := apiWithHeader(t, s, "POST", "/v1/conversations/"+c.ID+"/messages", ann.key, body, "Idempotency-Key", "send-1")
		r2 := apiWithHeader(t, s, "POST", "/v1/conversations/"+c.ID+"/messages", ann.key, body, "Idempotency-Key", "send-1")
		m1, m2 := decode[messaging.View](t, r1, 201), decode[messaging.View](t, r2, 201)
		if m1.ID != m2.ID {
			t.Fatalf("retried send made %s and %s", m1.ID, m2.ID)
		}
		if h := history(t, s, bob, c.ID, nil); len(h.Data) != 1 {
			t.Fatalf("history after a retried send: %v", bodies(h.Data))
		}
		wantProblem(t, s, apiWithHeader(t, s, "POST", "/v1/conversations/"+c.ID+"/messages", ann.key, `{"body":"other"}`, "Idempotency-Key", "send-1"), 409, "idempotency_key_reused", "Idempotency-Key")
		if n := len(streamed(t, s, bob.ID, messaging.StreamSent)); n != 1 {
			t.Fatalf("stream entries for bob: %d", n)
		}
	})
}
