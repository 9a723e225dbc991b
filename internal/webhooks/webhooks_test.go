package webhooks

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
)

func TestPatterns(t *testing.T) {
	cases := []struct {
		p, kind string
		want    bool
	}{
		{"*", "message.read", true}, {"user.*", "user.created", true}, {"user.*", "users.created", false},
		{"match.*", "user.created", false}, {"event.rsvp", "event.rsvp", true}, {"event.rsvp", "event.created", false},
	}
	for _, c := range cases {
		if got := Matches(c.p, c.kind); got != c.want {
			t.Errorf("Matches(%q, %q) = %v", c.p, c.kind, got)
		}
	}
	for _, p := range []string{"user.*", "*", "notification.delivered"} {
		if !ValidPattern(p) {
			t.Errorf("%q refused", p)
		}
	}
	for _, p := range []string{"user.", "user.**", "webhook.failing", "", "USER.CREATED"} {
		if ValidPattern(p) {
			t.Errorf("%q accepted", p)
		}
	}
}

// TestReadScopes is the table of the API reference.
func TestReadScopes(t *testing.T) {
	cases := []struct {
		kind   string
		scopes []string
		want   bool
	}{
		{"user.updated", []string{"profile"}, true}, {"user.updated", []string{"matching"}, false},
		{"match.created", []string{"matching"}, true}, {"match.created", []string{"events"}, false},
		{"event.rsvp", []string{"events"}, true}, {"event.rsvp", []string{"write"}, false},
		{"message.sent", []string{"read"}, true}, {"message.sent", []string{"profile", "write"}, false},
		{"notification.sent", []string{"read"}, true}, {"notification.sent", []string{"matching"}, false},
	}
	for _, c := range cases {
		if got := Readable(c.kind, c.scopes, false); got != c.want {
			t.Errorf("Readable(%s, %v) = %v", c.kind, c.scopes, got)
		}
		if !Readable(c.kind, nil, true) {
			t.Errorf("an Enterprise admin cannot read %s", c.kind)
		}
	}
	if _, err := checkEvents([]string{"*"}, []string{"profile"}, false); err == nil {
		t.Error("profile alone subscribed to everything")
	}
}

func TestRenderStripsOthersEmail(t *testing.T) {
	ev, _ := outbox.New(time.Now(), outbox.UserUpdated, "usr_a", "user", map[string]any{"id": "usr_a", "email": "a@example.com", "username": "a"})
	email := func(b []byte) any {
		var env outbox.Envelope
		_ = json.Unmarshal(b, &env)
		var u map[string]any
		_ = json.Unmarshal(env.Data["user"], &u)
		return u["email"]
	}
	if email(Render(ev.Type, ev.Payload, Reader{UserID: "usr_a"})) != "a@example.com" {
		t.Error("the user's own event lost the email")
	}
	if email(Render(ev.Type, ev.Payload, Reader{UserID: "usr_b"})) != nil {
		t.Error("another user received the email")
	}
	if email(Render(ev.Type, ev.Payload, Reader{UserID: "usr_b", Admin: true})) != "a@example.com" {
		t.Error("an admin lost the email")
	}
}

func TestSees(t *testing.T) {
	now := time.Now()
	sub := &Subscription{ID: "whk_1", UserID: "usr_a", Status: StatusActive, Events: []string{"*"}, Scopes: []string{"read"},
		CredentialLive: true, Tier: auth.TierFree, CreatedAt: now.Add(-time.Minute)}
	ev := &outbox.Event{Type: outbox.MatchCreated, Audience: []string{"usr_a", "usr_b"}, Created: now}
	if !sub.sees(ev) {
		t.Error("a member of the audience does not see it")
	}
	ev.Audience = []string{"usr_b"}
	if sub.sees(ev) {
		t.Error("an outsider sees it")
	}
	sub.Admin, sub.Scopes = true, []string{"admin"}
	if sub.sees(ev) {
		t.Error("admin without an Enterprise account sees it")
	}
	sub.Tier = auth.TierEnterprise
	if !sub.sees(ev) {
		t.Error("an Enterprise admin does not see it")
	}
	sub.CredentialLive = false
	if sub.sees(ev) {
		t.Error("a revoked credential sees it")
	}
	sub.CredentialLive, ev.Created = true, now.Add(-time.Hour)
	if sub.sees(ev) {
		t.Error("a subscription sees an event older than itself")
	}
}

func TestScheduleAndRetryAfter(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := &Service{clock: clk, schedule: []time.Duration{time.Second, time.Minute}}
	out := &Outcome{Job: &Job{Sub: Subscription{Status: StatusActive}}, Attempt: Attempt{Number: 1, StatusCode: 500}}
	s.decide(out, http.Header{"Retry-After": {"30"}})
	if out.Final != "" || out.Attempt.NextRetryAt == nil || out.Attempt.NextRetryAt.Sub(clk.Now()) != 30*time.Second || !out.StartClock {
		t.Errorf("after attempt 1 with Retry-After 30: %+v", out)
	}
	out = &Outcome{Job: &Job{Sub: Subscription{Status: StatusActive}}, Attempt: Attempt{Number: 2, StatusCode: 500}}
	s.decide(out, http.Header{"Retry-After": {"86400"}}) // bounded by the longest wait
	if out.Attempt.NextRetryAt.Sub(clk.Now()) != time.Minute {
		t.Errorf("Retry-After was not bounded: %v", out.Attempt.NextRetryAt)
	}
	out = &Outcome{Job: &Job{Sub: Subscription{Status: StatusActive}}, Attempt: Attempt{Number: 3, StatusCode: 500}}
	s.decide(out, nil)
	if out.Final != DeliveryFailed || !out.StartFailing {
		t.Errorf("after the last attempt: %+v", out)
	}
	out = &Outcome{Job: &Job{Sub: Subscription{Status: StatusActive}}, Attempt: Attempt{Number: 1, StatusCode: 410}}
	s.decide(out, nil)
	if out.Disable != ReasonGone || out.Final != DeliveryFailed {
		t.Errorf("410: %+v", out)
	}
	s.schedule, s.jitter = DefaultSchedule, true
	for range 100 {
		if d := s.delay(2, 0); d < 4*time.Minute || d > 6*time.Minute {
			t.Fatalf("jittered 5 min = %s", d)
		}
	}
}
