package e2e

import (
	"slices"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/events"
	"github.com/matchpoint-api/matchpoint/internal/httpapi"
)

// TestEventConversationFollowsGoing: a sports event's conversation has its
// creator and the people going, and changes as they answer.
func TestEventConversationFollowsGoing(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "ann", "bob", "cat", "dan")
		ann, bob, cat, dan := cs[0], cs[1], cs[2], cs[3]
		e := s.Event(t, ann.User, events.Draft{Title: "Sunday doubles", MaxParticipants: 2})
		rsvp := func(c chatter, method string) {
			t.Helper()
			body := ""
			if method == "PUT" {
				body = `{"status":"going"}`
			}
			if r := api(t, s, method, "/v1/events/"+e.ID+"/rsvp", eventsKey(t, s, c.User), body); r.Status >= 300 {
				t.Fatalf("rsvp %s: %d %s", method, r.Status, r.Body)
			}
		}
		members := func(c httpapi.Conversation) []string {
			var out []string
			for _, m := range c.Members {
				out = append(out, m.UserID)
			}
			slices.Sort(out)
			return out
		}
		want := func(us ...chatter) []string {
			out := idsOf(us)
			slices.Sort(out)
			return out
		}
		rsvp(bob, "PUT")
		wantProblem(t, s, api(t, s, "POST", "/v1/events/"+e.ID+"/conversation", cat.key, ""), 403, "not_going", "")
		wantProblem(t, s, api(t, s, "POST", "/v1/events/evt_nothing/conversation", cat.key, ""), 404, "not_found", "")
		c := decode[httpapi.Conversation](t, api(t, s, "POST", "/v1/events/"+e.ID+"/conversation", bob.key, ""), 201)
		if *c.EventID != e.ID || *c.Title != "Sunday doubles" || c.Type != "group" || !slices.Equal(members(c), want(ann, bob)) {
			t.Fatalf("event conversation: %+v", c)
		}
		if again := decode[httpapi.Conversation](t, api(t, s, "POST", "/v1/events/"+e.ID+"/conversation", ann.key, ""), 200); again.ID != c.ID || again.Me.Role != "admin" {
			t.Fatalf("again: %+v", again)
		}
		send(t, s, ann, c.ID, "Welcome")
		// Cat goes (the last place), Dan is waitlisted: only Cat joins.
		rsvp(cat, "PUT")
		rsvp(dan, "PUT")
		if got := members(conversation(t, s, ann, c.ID)); !slices.Equal(got, want(ann, bob, cat)) {
			t.Fatalf("after cat and dan answered: %v", got)
		}
		if cc := conversation(t, s, cat, c.ID); cc.UnreadCount != 0 || len(history(t, s, cat, c.ID, nil).Data) != 1 {
			t.Fatalf("cat's view: %+v", cc)
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/conversations/"+c.ID, dan.key, ""), 404, "not_found", "")
		// Bob withdraws: he leaves the conversation and Dan, moved up, joins.
		rsvp(bob, "DELETE")
		if got := members(conversation(t, s, ann, c.ID)); !slices.Equal(got, want(ann, cat, dan)) {
			t.Fatalf("after bob withdrew: %v", got)
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/conversations/"+c.ID, bob.key, ""), 404, "not_found", "")
		// Members are not changed by hand.
		wantProblem(t, s, api(t, s, "POST", "/v1/conversations/"+c.ID+"/leave", cat.key, ""), 409, "event_conversation", "")
		wantProblem(t, s, api(t, s, "POST", "/v1/conversations/"+c.ID+"/members", ann.key, jsonBody(t, map[string]any{"user_ids": []string{bob.ID}})), 409, "event_conversation", "")
		wantProblem(t, s, api(t, s, "DELETE", "/v1/conversations/"+c.ID+"/members/"+cat.ID, ann.key, ""), 409, "event_conversation", "")
	})
}
