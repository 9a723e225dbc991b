package e2e

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/store"
)

// record writes an event of any kind as a domain would (the match, event,
// message and notification domains use the same outbox).
func record(t *testing.T, s *apptest.Server, kind, subject, resource string, obj any, audience ...string) string {
	t.Helper()
	ev, err := outbox.New(s.Clock.Now(), kind, subject, resource, obj)
	if err != nil {
		t.Fatal(err)
	}
	if len(audience) > 0 {
		ev.Audience = audience
	}
	if err := store.NewWebhooks(s.App.DB).AppendEvents(context.Background(), &ev); err != nil {
		t.Fatal(err)
	}
	return ev.ID
}

// settle waits until every event is fanned out and no delivery is pending.
func settle(t *testing.T, s *apptest.Server) {
	t.Helper()
	apptest.WaitFor(t, "deliveries to settle", func() bool {
		n, err := s.App.Outbox.Pending(context.Background(), outbox.ConsumerWebhooks)
		if err != nil || n > 0 {
			return false
		}
		var pending int
		_ = s.App.DB.QueryRow(`SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending'`).Scan(&pending)
		return pending == 0
	})
}

// received maps the event ids a receiver got to their data objects.
func received(t *testing.T, r *apptest.Receiver) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, rec := range r.Deliveries() {
		env := parseEnvelope(t, rec.Body)
		for _, raw := range env.Data {
			var m map[string]any
			_ = json.Unmarshal(raw, &m)
			out[env.ID] = m
		}
	}
	return out
}

// TestWebhookAuthorization: a subscriber receives only what its credential
// could read through the API; an Enterprise admin subscriber receives
// everything; another user's email never leaves; a revoked credential
// receives nothing more.
func TestWebhookAuthorization(t *testing.T) {
	eachWebhookServer(t, "", func(t *testing.T, s *apptest.Server, rcv *apptest.Receiver) {
		rAnn, rBob, rOlga := rcv, apptest.NewReceiver(t, rcv.CA), apptest.NewReceiver(t, rcv.CA)
		rEnt := apptest.NewReceiver(t, rcv.CA)
		ann, bob, dave := s.User(t, "ann"), s.User(t, "bob"), s.User(t, "dave")
		annKey, bobKey := keyOf(t, s.App, ann.ID, "read", "write"), keyOf(t, s.App, bob.ID, "read", "write")
		_, entKey := enterprise(t, s, "ent")

		// Kinds the credential cannot read are refused, naming events.
		carlKey := keyOf(t, s.App, s.User(t, "carl").ID, "write", "matching")
		for _, evs := range []string{`["user.*"]`, `["*"]`, `["message.sent"]`} {
			r := api(t, s, "POST", "/api/v1/webhooks", carlKey, `{"url":"`+rAnn.URL+`","events":`+evs+`}`)
			wantProblem(t, s, r, 422, "event_type_not_readable", "events")
		}
		if r := api(t, s, "POST", "/api/v1/webhooks", carlKey, `{"url":"`+rAnn.URL+`","events":["match.*"]}`); r.Status != 201 {
			t.Fatalf("matching may subscribe match.*: %d %s", r.Status, r.Body)
		}
		wantProblem(t, s, api(t, s, "POST", "/api/v1/webhooks", annKey, `{"url":"`+rAnn.URL+`","events":["user.exploded"]}`), 422, "unknown_event_type", "events")
		wantProblem(t, s, api(t, s, "POST", "/api/v1/webhooks", annKey, `{"url":"`+rAnn.URL+`","events":[]}`), 422, "no_event_types", "events")
		wantProblem(t, s, api(t, s, "POST", "/api/v1/webhooks", annKey, `{"url":"http://example.com/hook","events":["*"]}`), 422, "invalid_url", "url")

		hAnn := subscribe(t, s, annKey, `{"url":"`+rAnn.URL+`","events":["*"]}`)
		subscribe(t, s, bobKey, `{"url":"`+rBob.URL+`","events":["user.*","match.*"]}`)
		subscribe(t, s, entKey, `{"url":"`+rEnt.URL+`","events":["*"]}`)

		// A third-party application acting for olga with her token.
		dev := s.User(t, "developer")
		f := newFlow(t, s, "olga", oauth.ClientSpec{OwnerID: dev.ID, Name: "Olga's tracker"})
		olgaToken := str(f.tokens("read write"), "access_token")
		subscribe(t, s, olgaToken, `{"url":"`+rOlga.URL+`","events":["user.updated","match.created"]}`)

		// One caller never sees another's subscriptions: 404, not 403.
		wantProblem(t, s, api(t, s, "GET", "/api/v1/webhooks/"+hAnn.ID, bobKey, ""), 404, "not_found", "")
		wantProblem(t, s, api(t, s, "DELETE", "/api/v1/webhooks/"+hAnn.ID, olgaToken, ""), 404, "not_found", "")

		patch := func(key, body string) {
			if r := api(t, s, "PATCH", "/v1/users/me", key, body); r.Status != 200 {
				t.Fatalf("patch: %d %s", r.Status, r.Body)
			}
		}
		patch(annKey, `{"first_name":"Annie"}`)
		patch(bobKey, `{"first_name":"Bobby"}`)
		patch(olgaToken, `{"first_name":"Olgaa"}`)
		matchID := record(t, s, outbox.MatchCreated, ann.ID, "match", map[string]any{"id": "mch_1", "user1_id": ann.ID, "user2_id": dave.ID}, ann.ID, dave.ID)
		msgID := record(t, s, outbox.MessageSent, bob.ID, "message", map[string]any{"id": "msg_1", "sender_id": bob.ID, "text": "private words"}, bob.ID, dave.ID)
		// An event about dave that ann may read (say, a match partner's
		// profile): ann gets it without dave's email.
		daveID := record(t, s, outbox.UserUpdated, dave.ID, "user", map[string]any{"id": dave.ID, "email": "dave@example.com", "username": "dave"}, dave.ID, ann.ID)
		settle(t, s)

		gotAnn, gotBob, gotOlga, gotEnt := received(t, rAnn), received(t, rBob), received(t, rOlga), received(t, rEnt)
		usersOf := func(got map[string]map[string]any) map[string]bool {
			out := map[string]bool{}
			for _, d := range got {
				if id, _ := d["id"].(string); id != "" {
					out[id] = true
				}
			}
			return out
		}
		if u := usersOf(gotAnn); !u[ann.ID] || u[bob.ID] || !u[dave.ID] {
			t.Errorf("ann received events about %v", u)
		}
		if u := usersOf(gotBob); !u[bob.ID] || u[ann.ID] || u[dave.ID] {
			t.Errorf("bob received events about %v", u)
		}
		if u := usersOf(gotOlga); len(u) != 1 || !u[f.user.ID] {
			t.Errorf("olga's app received events about %v", u)
		}
		if _, ok := gotAnn[matchID]; !ok {
			t.Error("ann did not receive her match")
		}
		if _, ok := gotBob[msgID]; ok {
			t.Error("bob received a message event he did not subscribe to")
		}
		if _, ok := gotAnn[msgID]; ok {
			t.Error("ann received a message between bob and dave")
		}
		if d := gotAnn[daveID]; d == nil || d["email"] != nil {
			t.Errorf("ann's copy of dave's update: %v (must not hold his email)", d)
		}
		for _, d := range gotAnn {
			if d["id"] == ann.ID && d["email"] != "ann@example.com" {
				t.Errorf("ann's own event lacks her email: %v", d)
			}
		}
		// The Enterprise admin subscriber receives everything, in full.
		for _, id := range []string{matchID, msgID, daveID} {
			if _, ok := gotEnt[id]; !ok {
				t.Errorf("the admin subscriber missed %s", id)
			}
		}
		if gotEnt[daveID]["email"] != "dave@example.com" || len(usersOf(gotEnt)) < 4 {
			t.Errorf("admin received %v", gotEnt)
		}

		// A revoked key receives nothing more, and its subscription shows why.
		annKey2 := keyOf(t, s.App, ann.ID, "read", "write")
		keyID := keyIDOf(t, s, annKey)
		if r := api(t, s, "DELETE", "/v1/api-keys/"+keyID, annKey2, ""); r.Status != 200 {
			t.Fatalf("revoke: %d %s", r.Status, r.Body)
		}
		r := api(t, s, "GET", "/api/v1/webhooks/"+hAnn.ID, annKey2, "")
		if m := r.JSON(t); m["status"] != "disabled" || m["disabled_reason"] != "credential_revoked" {
			t.Errorf("after revocation: %s", r.Body)
		}
		before := len(rAnn.Deliveries())
		patch(annKey2, `{"first_name":"Ann"}`)
		s.Clock.Advance(time.Second)
		settle(t, s)
		if after := len(rAnn.Deliveries()); after != before {
			t.Errorf("a revoked key's subscription received %d more deliveries", after-before)
		}
	})
}

// keyIDOf finds the record id of an API key through the API.
func keyIDOf(t *testing.T, s *apptest.Server, key string) string {
	t.Helper()
	r := api(t, s, "GET", "/v1/api-keys", key, "")
	var l struct {
		Data []struct{ ID, Hint string }
	}
	_ = json.Unmarshal(r.Body, &l)
	for _, k := range l.Data {
		if len(k.Hint) > 4 && key[len(key)-4:] == k.Hint[len(k.Hint)-4:] {
			return k.ID
		}
	}
	t.Fatalf("key not found in %s", r.Body)
	return ""
}
