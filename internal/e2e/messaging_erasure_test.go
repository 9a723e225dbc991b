package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/events"
	"github.com/matchpoint-api/matchpoint/internal/messaging"
)

func eraseChatter(t testing.TB, s *apptest.Server, c chatter) {
	t.Helper()
	if r := api(t, s, "DELETE", "/v1/users/me", keyOf(t, s.App, c.ID, "profile"), ""); r.Status != 204 {
		t.Fatalf("erase %s: %d %s", c.FirstName, r.Status, r.Body)
	}
}

// An erased event creator is not brought back into the event's
// conversation (as admin) by a later change of its attendees, and the
// conversation loses the title it copied from their event.
func TestMessagingEventConversationForgetsErasedCreator(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "ann", "bob", "cat")
		ann, bob, cat := cs[0], cs[1], cs[2]
		id := eventConversation(t, s, ann, "Annsecret doubles", bob, cat)
		eraseChatter(t, s, ann)
		if got := conversation(t, s, bob, id); got.Title != nil && strings.Contains(*got.Title, "Annsecret") {
			t.Errorf("the conversation keeps the erased creator's title %q", *got.Title)
		}
		eraseChatter(t, s, cat) // changes the attendees
		got := conversation(t, s, bob, id)
		for _, m := range got.Members {
			if m.UserID == ann.ID || m.UserID == cat.ID {
				t.Errorf("an erased account is a member again: %+v", got.Members)
			}
		}
		if len(got.Members) != 1 || got.Members[0].Role != messaging.Admin {
			t.Errorf("members = %+v, want bob alone as admin", got.Members)
		}
	})
}

// Someone who may not see an invite-only event learns nothing of it by
// asking for its conversation: 404 as for an event that does not exist.
func TestMessagingEventConversationHidesInvisibleEvents(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "bob", "dan")
		bob, dan := cs[0], cs[1]
		hidden := s.Event(t, bob.User, events.Draft{Title: "hidden", Visibility: "invite_only"})
		wantProblem(t, s, api(t, s, "GET", "/v1/events/"+hidden.ID, dan.key, ""), 404, "not_found", "")
		wantProblem(t, s, api(t, s, "POST", "/v1/events/"+hidden.ID+"/conversation", dan.key, ""), 404, "not_found", "")
		public := s.Event(t, bob.User, events.Draft{Title: "open"})
		wantProblem(t, s, api(t, s, "POST", "/v1/events/"+public.ID+"/conversation", dan.key, ""), 403, "not_going", "")
	})
}

// Erasing a group's only admin hands the group to its longest-standing
// member, as leaving does.
func TestMessagingErasurePromotesAnAdmin(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "ann", "bob", "cat")
		ann, bob, cat := cs[0], cs[1], cs[2]
		g := startConversation(t, s, ann, "Club", bob, cat)
		eraseChatter(t, s, ann)
		got := conversation(t, s, cat, g.ID)
		admins := 0
		for _, m := range got.Members {
			if m.Role == messaging.Admin {
				admins++
			}
		}
		if admins != 1 {
			t.Fatalf("after erasing the only admin the group has %d admins: %+v", admins, got.Members)
		}
		// The new admin can run the group.
		if r := api(t, s, "PATCH", "/v1/conversations/"+g.ID, bob.key, `{"title":"Club 2"}`); r.Status != 200 {
			if r2 := api(t, s, "PATCH", "/v1/conversations/"+g.ID, cat.key, `{"title":"Club 2"}`); r2.Status != 200 {
				t.Errorf("no member may rename the group: %d %s / %d %s", r.Status, r.Body, r2.Status, r2.Body)
			}
		}
	})
}

// TestErasedAccountKeepsNoStreamRows: an erased account's own stream rows
// go with it, including those its erasure itself writes (it leaves an
// event's conversation, which tells the members, the leaver too).
func TestErasedAccountKeepsNoStreamRows(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "ann", "bob", "cat")
		ann, bob, cat := cs[0], cs[1], cs[2]
		eventConversation(t, s, ann, "doubles", bob, cat)
		eraseChatter(t, s, cat)
		var n int
		if err := s.App.DB.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM stream_events WHERE user_id = $1`, cat.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			var row string
			_ = s.App.DB.QueryRowContext(context.Background(), `SELECT kind || ' ' || data FROM stream_events WHERE user_id = $1`, cat.ID).Scan(&row)
			t.Errorf("the erased account keeps %d stream rows, such as %s", n, row)
		}
	})
}
