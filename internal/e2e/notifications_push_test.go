package e2e

import (
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
)

// eachPush runs fn per engine with a service that trusts the test's TLS
// servers (httptest's certificate) and may call loopback addresses, as
// MATCHPOINT_WEBHOOK_CA_FILE and MATCHPOINT_WEBHOOK_ALLOW_PRIVATE allow.
func eachPush(t *testing.T, configure func(t *testing.T, c *config.Config), fn func(t *testing.T, s *apptest.Server)) {
	t.Helper()
	for _, d := range testdb.Engines() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ca := apptest.CAFile(t, httptestCert(t))
			s := apptest.StartWith(t, d, apptest.Options{Configure: func(c *config.Config, _ *app.Options) {
				c.WebhookAllowPrivate, c.WebhookCAFile = true, ca
				if configure != nil {
					configure(t, c)
				}
			}})
			fn(t, s)
		})
	}
}

// notificationEvents returns the notification.* events recorded so far, with
// their data.notification decoded.
func notificationEvents(t *testing.T, s *apptest.Server) []notificationEvent {
	t.Helper()
	evs, err := s.App.Outbox.Recorded(t.Context(), 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	var out []notificationEvent
	for _, ev := range evs {
		if !strings.HasPrefix(ev.Type, "notification.") {
			continue
		}
		var env struct {
			Data struct {
				Notification map[string]any `json:"notification"`
			} `json:"data"`
		}
		if err := json.Unmarshal(ev.Payload, &env); err != nil {
			t.Fatal(err)
		}
		out = append(out, notificationEvent{Event: ev, N: env.Data.Notification})
	}
	return out
}

type notificationEvent struct {
	outbox.Event
	N map[string]any
}

func (e notificationEvent) delivery() map[string]any {
	d, _ := e.N["delivery"].(map[string]any)
	return d
}

// TestWebPush: a subscription registered through the API receives a
// notification written through the seam, encrypted per RFC 8291 with a
// VAPID JWT the push service verifies; the two events are recorded; a 410
// removes the subscription.
func TestWebPush(t *testing.T) {
	eachPush(t, nil, func(t *testing.T, s *apptest.Server) {
		ps := newPushService(t, s.Clock.Now)
		r := api(t, s, "GET", "/v1/push/vapid-public-key", "", "")
		if r.Status != 200 || str(r.JSON(t), "object") != "vapid_public_key" {
			t.Fatalf("vapid key: %d %s", r.Status, r.Body)
		}
		ps.vapid = str(r.JSON(t), "public_key")

		nina := s.User(t, "nina")
		key := s.Key(t, nina, "read", "write")
		sub := ps.subscribe("nina-firefox")
		r = api(t, s, "POST", "/v1/users/me/devices", key, `{"platform":"webpush","name":"Firefox","subscription":`+ps.json(sub)+`}`)
		if r.Status != 201 {
			t.Fatalf("register: %d %s", r.Status, r.Body)
		}
		dev := r.JSON(t)
		if str(dev, "push_service") != ps.srv.URL || strings.Contains(string(r.Body), sub.path) || r.Header.Get("Location") != "/v1/users/me/devices/"+str(dev, "id") {
			t.Errorf("device %s (Location %q): the endpoint must not be shown", r.Body, r.Header.Get("Location"))
		}

		n := s.Notify(t, nina.ID, notify.KindMatchRequested, "Bob wants to play tennis", "Saturday morning?", "", map[string]string{"match_id": "mch_1"})
		if len(ps.messages()) != 0 {
			t.Fatal("a push went out in the request that caused it")
		}
		if sent := s.SendNotifications(t); sent != 1 {
			t.Fatalf("%d jobs sent, want 1", sent)
		}
		msgs := ps.messages()
		if len(msgs) != 1 {
			t.Fatalf("%d pushes received", len(msgs))
		}
		p := msgs[0].Payload
		if p["id"] != n.ID || p["title"] != "Bob wants to play tennis" || p["body"] != "Saturday morning?" || p["kind"] != notify.KindMatchRequested {
			t.Errorf("payload %v", p)
		}
		if d, _ := p["data"].(map[string]any); d["match_id"] != "mch_1" {
			t.Errorf("payload data %v", p["data"])
		}
		if msgs[0].Header.Get("Urgency") != "high" {
			t.Errorf("Urgency %q", msgs[0].Header.Get("Urgency"))
		}

		evs := notificationEvents(t, s)
		if len(evs) != 2 || evs[0].Type != outbox.NotificationSent || evs[1].Type != outbox.NotificationDelivered {
			t.Fatalf("events %+v", evs)
		}
		for _, ev := range evs {
			if ev.N["id"] != n.ID || ev.N["title"] != "Bob wants to play tennis" || ev.N["user_id"] != nina.ID {
				t.Errorf("%s data %v", ev.Type, ev.N)
			}
			if _, ok := ev.N["body"]; ok {
				t.Errorf("%s carries the body: %v", ev.Type, ev.N)
			}
			if len(ev.Audience) != 1 || ev.Audience[0] != nina.ID || ev.UserID != nina.ID {
				t.Errorf("%s audience %v user %s", ev.Type, ev.Audience, ev.UserID)
			}
			if d := ev.delivery(); d["channel"] != "push" || d["platform"] != "webpush" || d["device_id"] != str(dev, "id") {
				t.Errorf("%s delivery %v", ev.Type, d)
			}
		}
		r = api(t, s, "GET", "/v1/users/me/devices", key, "")
		if got := r.JSON(t)["data"].([]any); len(got) != 1 || str(got[0].(map[string]any), "last_used_at") == "" {
			t.Errorf("devices after a delivery: %s", r.Body)
		}

		// The push service says the subscription is gone: it is removed.
		ps.answer(sub, pushAnswer{status: http.StatusGone})
		s.Notify(t, nina.ID, notify.KindMatchAccepted, "Bob accepted", "", "", nil)
		s.SendNotifications(t)
		r = api(t, s, "GET", "/v1/users/me/devices", key, "")
		if got := r.JSON(t)["data"].([]any); len(got) != 0 {
			t.Fatalf("a gone subscription is still registered: %s", r.Body)
		}
		if n := s.PendingNotificationJobs(t); n != 0 {
			t.Errorf("%d jobs left for a removed device", n)
		}
		s.Notify(t, nina.ID, notify.KindMatchAccepted, "Carl accepted", "", "", nil)
		s.SendNotifications(t)
		if got := len(ps.messages()); got != 2 {
			t.Errorf("%d pushes after removal, want 2", got)
		}
		if evs := notificationEvents(t, s); len(evs) != 3 || evs[2].Type != outbox.NotificationSent {
			t.Errorf("a push to a gone target is sent, not delivered: %+v", evs)
		}
	})
}

// TestPushRetries: failures the push service calls temporary are retried
// with backoff (its Retry-After honoured) until it accepts; the sent event
// is recorded once, the delivered one when it is accepted.
func TestPushRetries(t *testing.T) {
	eachPush(t, nil, func(t *testing.T, s *apptest.Server) {
		ps := newPushService(t, s.Clock.Now)
		ps.vapid = s.App.Notifications.VAPIDPublicKey()
		u := s.User(t, "rita")
		key := s.Key(t, u, "write")
		sub := ps.subscribe("rita")
		if r := api(t, s, "POST", "/v1/users/me/devices", key, `{"platform":"webpush","subscription":`+ps.json(sub)+`}`); r.Status != 201 {
			t.Fatalf("register: %d %s", r.Status, r.Body)
		}
		ps.answer(sub, pushAnswer{status: 503, retryAfter: "120"}, pushAnswer{status: 500}, pushAnswer{status: 429})
		s.Notify(t, u.ID, notify.KindEventCancelled, "Sunday football is cancelled", "", "", nil)

		s.SendNotifications(t)
		if n := len(ps.messages()); n != 1 {
			t.Fatalf("%d attempts", n)
		}
		// Not due again before Retry-After.
		s.Clock.Advance(110 * time.Second)
		s.SendNotifications(t)
		if n := len(ps.messages()); n != 1 {
			t.Fatalf("retried before Retry-After: %d attempts", n)
		}
		for attempt := 2; attempt <= 4; attempt++ {
			s.Clock.Advance(time.Hour) // beyond any backoff of the first attempts
			s.SendNotifications(t)
			if n := len(ps.messages()); n != attempt {
				t.Fatalf("after %d waits: %d attempts", attempt-1, n)
			}
		}
		msgs := ps.messages()
		if msgs[3].Status != 201 || msgs[0].Payload["id"] != msgs[3].Payload["id"] {
			t.Fatalf("attempts %+v", msgs)
		}
		evs := notificationEvents(t, s)
		if len(evs) != 2 || evs[0].Type != outbox.NotificationSent || evs[1].Type != outbox.NotificationDelivered {
			t.Errorf("events %+v", evs)
		}
		if n := s.PendingNotificationJobs(t); n != 0 {
			t.Errorf("%d jobs left", n)
		}
	})
}

// httptestCert is the certificate every httptest TLS server presents.
func httptestCert(t *testing.T) *x509.Certificate {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	return srv.Certificate()
}
