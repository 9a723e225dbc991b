package e2e

import (
	"encoding/json"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
)

// TestMessageEventsReachSubscribers: message.sent and message.read reach
// the webhooks of the conversation's members, and nobody else's, nor the
// webhook of a member blocked by the sender.
func TestMessageEventsReachSubscribers(t *testing.T) {
	for _, d := range testdb.Engines() {
		t.Run(string(d), func(t *testing.T) {
			ca := apptest.NewCA(t)
			s := apptest.StartWith(t, d, apptest.WebhookConfig(ca, "1s"))
			s.RunWebhooks(t)
			cs := chatters(t, s, "ann", "bob", "cat", "eve")
			ann, bob, cat, eve := cs[0], cs[1], cs[2], cs[3]
			rcv := map[string]*apptest.Receiver{}
			for _, u := range cs {
				rcv[u.ID] = apptest.NewReceiver(t, ca)
				subscribe(t, s, u.key, `{"url":"`+rcv[u.ID].URL+`","events":["message.*"]}`)
			}
			g := startConversation(t, s, ann, "Club", bob, cat)
			blockVia(t, s, cat, ann)
			m := send(t, s, ann, g.ID, "Court 3 at ten")
			waitKinds(t, rcv[ann.ID], "message.sent")
			waitKinds(t, rcv[bob.ID], "message.sent")
			env := parseEnvelope(t, rcv[bob.ID].Deliveries()[0].Body)
			var data struct {
				ID             string `json:"id"`
				ConversationID string `json:"conversation_id"`
				SenderID       string `json:"sender_id"`
				Text           string `json:"text"`
				CreatedAt      string `json:"created_at"`
			}
			if err := json.Unmarshal(env.Data["message"], &data); err != nil {
				t.Fatal(err)
			}
			if data.ID != m.ID || data.ConversationID != g.ID || data.SenderID != ann.ID || data.Text != "Court 3 at ten" || data.CreatedAt != m.CreatedAt {
				t.Fatalf("data.message = %s", env.Data["message"])
			}
			api(t, s, "POST", "/v1/conversations/"+g.ID+"/read", bob.key, jsonBody(t, map[string]string{"message_id": m.ID}))
			waitKinds(t, rcv[ann.ID], "message.sent", "message.read")
			waitKinds(t, rcv[bob.ID], "message.sent", "message.read")
			env = parseEnvelope(t, rcv[ann.ID].Deliveries()[1].Body)
			var read struct {
				ID     string `json:"id"`
				ReadBy string `json:"read_by"`
				ReadAt string `json:"read_at"`
			}
			if err := json.Unmarshal(env.Data["message"], &read); err != nil || read.ID != m.ID || read.ReadBy != bob.ID || read.ReadAt == "" {
				t.Fatalf("message.read data %s (%v)", env.Data["message"], err)
			}
			// Cat (who blocks Ann) and Eve (no member) hear nothing of it;
			// Cat hears what Bob writes.
			b := send(t, s, bob, g.ID, "ok")
			waitKinds(t, rcv[cat.ID], "message.sent")
			if env := parseEnvelope(t, rcv[cat.ID].Deliveries()[0].Body); !json.Valid(env.Data["message"]) || !contains(env.Data["message"], b.ID) {
				t.Fatalf("cat got %s", env.Data["message"])
			}
			waitKinds(t, rcv[ann.ID], "message.sent", "message.read", "message.sent")
			if got := kindsFor(t, rcv[eve.ID]); len(got) != 0 {
				t.Fatalf("eve got %v", got)
			}
			if got := kindsFor(t, rcv[cat.ID]); len(got) != 1 {
				t.Fatalf("cat got %v", got)
			}
		})
	}
}

func contains(raw json.RawMessage, s string) bool {
	var m map[string]any
	return json.Unmarshal(raw, &m) == nil && m["id"] == s
}
