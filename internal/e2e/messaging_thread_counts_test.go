package e2e

import (
	"net/url"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/messaging"
)

// A thread's reply count and last reply time leave out the replies of
// someone the viewer blocks, as the thread itself does.
func TestMessagingThreadCountsLeaveOutBlockedReplies(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "ann", "bob", "cat")
		ann, bob, cat := cs[0], cs[1], cs[2]
		g := startConversation(t, s, ann, "Club", bob, cat)
		root := send(t, s, ann, g.ID, "who plays on Sunday?")
		s.Clock.Advance(time.Minute)
		fromCat := reply(t, s, cat, g.ID, root.ID, "me")
		s.Clock.Advance(time.Minute)
		fromBob := reply(t, s, bob, g.ID, root.ID, "me too")
		blockVia(t, s, ann, bob)
		check := func(who chatter, count int, last string) {
			t.Helper()
			one := decode[messaging.View](t, api(t, s, "GET", "/v1/messages/"+root.ID, who.key, ""), 200)
			page := history(t, s, who, g.ID, url.Values{})
			var listed *messaging.View
			for i := range page.Data {
				if page.Data[i].ID == root.ID {
					listed = &page.Data[i]
				}
			}
			if listed == nil {
				t.Fatalf("%s's history misses the root", who.FirstName)
			}
			for _, v := range []messaging.View{one, *listed} {
				got := "null"
				if v.LastReplyAt != nil {
					got = *v.LastReplyAt
				}
				if v.ReplyCount != count || got != last {
					t.Errorf("%s sees reply_count %d, last_reply_at %s; want %d, %s", who.FirstName, v.ReplyCount, got, count, last)
				}
			}
		}
		check(ann, 1, fromCat.CreatedAt)
		check(cat, 2, fromBob.CreatedAt)
	})
}
