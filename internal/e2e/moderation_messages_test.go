package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/httpapi"
	"github.com/matchpoint-api/matchpoint/internal/messaging"
	"github.com/matchpoint-api/matchpoint/internal/moderation"
)

const harassReview = "you are a worthless idiot"

func convMessages(t *testing.T, s *apptest.Server, who chatter, convID string) []messaging.View {
	t.Helper()
	return decode[httpapi.MessageList](t, api(t, s, "GET", "/v1/conversations/"+convID+"/messages?order=asc&limit=100", who.key, ""), 200).Data
}

func bodiesOf(vs []messaging.View) []string {
	var out []string
	for _, v := range vs {
		if v.Body != nil {
			out = append(out, *v.Body)
		} else {
			out = append(out, "<deleted>")
		}
	}
	return out
}

// TestModerationMessages: the engine on message send and edit: block
// refuses, warn delivers and tells the sender, review holds until a
// moderator releases or removes, self-harm delivers with a case and
// support; messages can be reported by the people who can read them.
func TestModerationMessages(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		_, op := s.Operator(t, "mod")
		cs := chatters(t, s, "alice", "bob", "carol")
		alice, bob, carol := cs[0], cs[1], cs[2]
		conv := startConversation(t, s, alice, "", bob)

		// block
		wantProblem(t, s, api(t, s, "POST", "/v1/conversations/"+conv.ID+"/messages", alice.key, `{"body":"`+threatText+`"}`), 422, "content_blocked", "body")
		// not a member: 404 before anything
		wantProblem(t, s, api(t, s, "POST", "/v1/conversations/"+conv.ID+"/messages", carol.key, `{"body":"`+scamReview+`"}`), 404, "not_found", "")
		// warn
		w := send(t, s, alice, conv.ID, phoneText)
		if w.Moderation == nil || w.Moderation.Decision != "warn" || w.Status != "" {
			t.Fatalf("warned message: %+v", w)
		}
		// review: held, not delivered, not in anyone's history
		h := send(t, s, alice, conv.ID, scamReview)
		if h.Status != "held" || h.Moderation == nil || h.Moderation.Decision != "review" || !strings.HasPrefix(h.ID, "msg_") {
			t.Fatalf("held message: %+v", h)
		}
		h2 := send(t, s, alice, conv.ID, harassReview)
		seen := convMessages(t, s, bob, conv.ID)
		if got := bodiesOf(seen); strings.Join(got, "|") != phoneText {
			t.Fatalf("bob sees %v", got)
		}
		if seen[0].Moderation == nil || seen[0].Moderation.Decision != "warn" || !has(flaggedOf(seen[0].Moderation.Flagged), "personal_data") {
			t.Fatalf("the warning's mark for its reader: %+v", seen[0].Moderation)
		}
		// self-harm: delivered, a case, support for the sender
		sh := send(t, s, alice, conv.ID, selfHarmText)
		if sh.Status != "" || sh.Moderation == nil || sh.Moderation.Support == nil || len(sh.Moderation.Support.Resources) == 0 {
			t.Fatalf("self-harm message: %+v", sh)
		}
		open := openCases(t, s, op, "")
		if c := caseFor(open, sh.ID); c == nil || !has(c.Reasons, "self_harm") || c.Held {
			t.Fatalf("self-harm case: %+v", c)
		}
		hc := caseFor(open, h.ID)
		if hc == nil || !hc.Held || hc.Evidence["body"] != scamReview || hc.Evidence["conversation_id"] != conv.ID {
			t.Fatalf("held case: %+v", hc)
		}
		// release delivers it, from alice; remove keeps the other out for good.
		decide(t, s, op, hc.ID, `{"action":"release","reason":"a club fee"}`)
		decide(t, s, op, caseFor(open, h2.ID).ID, `{"action":"remove_content","reason":"insult"}`)
		got := convMessages(t, s, bob, conv.ID)
		if strings.Join(bodiesOf(got), "|") != phoneText+"|"+selfHarmText+"|"+scamReview || got[2].SenderID != alice.ID {
			t.Fatalf("after the decisions bob sees %v", bodiesOf(got))
		}

		// edit: block refused, review held (the message stays as it was until released)
		wantProblem(t, s, api(t, s, "PATCH", "/v1/messages/"+w.ID, alice.key, `{"body":"`+threatText+`"}`), 422, "content_blocked", "body")
		e := decode[messaging.View](t, api(t, s, "PATCH", "/v1/messages/"+w.ID, alice.key, `{"body":"`+harassReview+`"}`), 200)
		if e.Status != "held" || *e.Body != phoneText {
			t.Fatalf("held edit: %+v", e)
		}
		if m := decode[messaging.View](t, api(t, s, "GET", "/v1/messages/"+w.ID, bob.key, ""), 200); *m.Body != phoneText {
			t.Fatalf("a held edit went out: %q", *m.Body)
		}
		ec := caseFor(openCases(t, s, op, ""), w.ID)
		decide(t, s, op, ec.ID, `{"action":"release","reason":"banter between friends"}`)
		if m := decode[messaging.View](t, api(t, s, "GET", "/v1/messages/"+w.ID, bob.key, ""), 200); *m.Body != harassReview || m.EditedAt == nil || m.Moderation != nil {
			t.Fatalf("released edit: %+v", m)
		}

		// Reports on messages: only by who can read them; evidence kept.
		wantProblem(t, s, api(t, s, "POST", "/v1/reports", carol.key, `{"target_type":"message","target_id":"`+sh.ID+`","reason":"harassment"}`), 404, "not_found", "")
		wantProblem(t, s, api(t, s, "POST", "/v1/reports", alice.key, `{"target_type":"message","target_id":"`+sh.ID+`","reason":"harassment"}`), 422, "cannot_report_self", "target_id")
		plain := send(t, s, alice, conv.ID, "meet me at the court at ten")
		decode[httpapi.ReportOut](t, api(t, s, "POST", "/v1/reports", bob.key, `{"target_type":"message","target_id":"`+plain.ID+`","reason":"spam"}`), 201)
		decode[messaging.View](t, api(t, s, "PATCH", "/v1/messages/"+plain.ID, alice.key, `{"body":"see you there"}`), 200)
		rc := caseFor(openCases(t, s, op, ""), plain.ID)
		if rc == nil || rc.Evidence["body"] != "meet me at the court at ten" || rc.SubjectID != alice.ID {
			t.Fatalf("message case: %+v", rc)
		}
		decide(t, s, op, rc.ID, `{"action":"remove_content","reason":"spam"}`)
		if m := decode[messaging.View](t, api(t, s, "GET", "/v1/messages/"+plain.ID, bob.key, ""), 200); !m.Deleted {
			t.Fatalf("removed message: %+v", m)
		}
	})
}

// TestMessagingSignals: one sender opening conversations with many people
// and sending them one same text is counted.
func TestMessagingSignals(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		cs := chatters(t, s, "blaster", "one", "two", "three")
		const text = "Join my paid coaching group, best rates in town"
		for _, to := range cs[1:] {
			conv := startConversation(t, s, cs[0], "", to)
			send(t, s, cs[0], conv.ID, text)
		}
		sg, err := s.App.Moderation.ComputeSignals(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var counts map[string]int
		for _, g := range sg {
			if g.UserID == cs[0].ID {
				counts = g.Counts
			}
		}
		if counts["fanout"] != 3 || counts["same_text"] != 3 || counts["new_account_links"] != 0 {
			t.Fatalf("signals: %v", counts)
		}
	})
}

func flaggedOf(cs []moderation.Category) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = string(c)
	}
	return out
}
