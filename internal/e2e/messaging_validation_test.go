package e2e

import (
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
)

// An empty or malformed member id is a clear 422 naming the list, never a
// server error.
func TestMessagingRefusesMalformedMemberIDs(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "ann", "bob")
		ann, bob := cs[0], cs[1]
		g := startConversation(t, s, ann, "Club", bob)
		for _, id := range []string{"", "bob", "usr_", "evt_" + bob.ID[4:], bob.ID + "x"} {
			code := "unknown_user"
			if id == "" {
				code = "invalid_id"
			}
			body := jsonBody(t, map[string]any{"member_ids": []string{id}})
			wantProblem(t, s, api(t, s, "POST", "/v1/conversations", ann.key, body), 422, code, "member_ids")
			body = jsonBody(t, map[string]any{"member_ids": []string{bob.ID, id}, "title": "Team"})
			wantProblem(t, s, api(t, s, "POST", "/v1/conversations", ann.key, body), 422, code, "member_ids")
			body = jsonBody(t, map[string]any{"user_ids": []string{id}})
			wantProblem(t, s, api(t, s, "POST", "/v1/conversations/"+g.ID+"/members", ann.key, body), 422, code, "user_ids")
		}
	})
}

// Bidirectional override and isolate characters, which make a message
// show in another order than it reads, are refused in bodies.
func TestMessagingRefusesBidiOverrides(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "ann", "bob")
		ann, bob := cs[0], cs[1]
		g := startConversation(t, s, ann, "Club", bob)
		for _, r := range []rune{0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069} {
			body := jsonBody(t, map[string]string{"body": "pay " + string(r) + "01 EUR"})
			wantProblem(t, s, api(t, s, "POST", "/v1/conversations/"+g.ID+"/messages", ann.key, body), 422, "invalid_text", "body")
		}
		m := send(t, s, ann, g.ID, "right-to-left is fine: שלום and a zero\u200bwidth space")
		wantProblem(t, s, api(t, s, "PATCH", "/v1/messages/"+m.ID, ann.key, `{"body":"a\u202eb"}`), 422, "invalid_text", "body")
	})
}
