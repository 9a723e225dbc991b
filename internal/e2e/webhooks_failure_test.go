package e2e

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/pkg/webhook"
)

// TestWebhookFailureHandling: retries on the schedule, then failing: the
// account's other endpoint gets webhook.failing, a notification is recorded
// and the owner is emailed; a manual retry that succeeds reactivates; 410
// disables; five days of failure disable; rotation signs with both secrets;
// pause holds deliveries until resume; test deliveries and bulk retries.
func TestWebhookFailureHandling(t *testing.T) {
	for _, d := range testdb.Engines() {
		t.Run(string(d), func(t *testing.T) {
			ca := apptest.NewCA(t)
			bad, good := apptest.NewReceiver(t, ca), apptest.NewReceiver(t, ca)
			mails := apptest.StartSMTP(t)
			s := apptest.StartWith(t, d, apptest.Options{Configure: func(c *config.Config, o *app.Options) {
				apptest.WebhookConfig(ca, "1s,1s").Configure(c, o)
				c.SMTPURL = "smtp://" + mails.Addr + "?from=hooks@matchpoint.test"
			}})
			s.RunWebhooks(t)
			var answer atomic.Int32
			answer.Store(500)
			bad.SetRespond(func(w http.ResponseWriter, r *http.Request, body []byte) int {
				code := int(answer.Load())
				w.WriteHeader(code)
				_, _ = w.Write([]byte(`{"error":"down"}`))
				return code
			})
			ann := s.User(t, "ann")
			key := keyOf(t, s.App, ann.ID, "read", "write")
			hBad := subscribe(t, s, key, `{"url":"`+bad.URL+`","events":["user.*"]}`)
			hGood := subscribe(t, s, key, `{"url":"`+good.URL+`","events":["match.*"]}`)
			get := func(id string) map[string]any { return api(t, s, "GET", "/api/v1/webhooks/"+id, key, "").JSON(t) }
			patch := func(name string) {
				if r := api(t, s, "PATCH", "/v1/users/me", key, `{"first_name":"`+name+`"}`); r.Status != 200 {
					t.Fatalf("patch: %d %s", r.Status, r.Body)
				}
			}
			attempts := func() int { return len(bad.Deliveries()) }

			// recorded is how many failed attempts the service has written down:
			// the clock may move on only after that, or the next retry would be
			// scheduled from the moved clock and never fall due.
			recorded := func() int {
				var page struct {
					Data []struct {
						AttemptCount int `json:"attempt_count"`
					} `json:"data"`
				}
				if err := json.Unmarshal(api(t, s, "GET", "/api/v1/webhooks/"+hBad.ID+"/deliveries", key, "").Body, &page); err != nil || len(page.Data) == 0 {
					return 0
				}
				return page.Data[0].AttemptCount
			}
			// Three attempts a second apart (fake clock), then failing.
			patch("A1")
			apptest.WaitFor(t, "attempt 1", func() bool { return attempts() == 1 && recorded() == 1 })
			for n := 2; n <= 3; n++ {
				s.Clock.Advance(1100 * time.Millisecond)
				apptest.WaitFor(t, "the next attempt", func() bool { return attempts() == n && recorded() == n })
			}
			apptest.WaitFor(t, "failing", func() bool { return get(hBad.ID)["status"] == "failing" })
			apptest.WaitFor(t, "webhook.failing at the other endpoint", func() bool { return len(good.Deliveries()) == 1 })
			env := parseEnvelope(t, good.Deliveries()[0].Body)
			if env.Type != "webhook.failing" || !strings.Contains(string(env.Data["webhook"]), hBad.ID) {
				t.Errorf("webhook.failing: %s", good.Deliveries()[0].Body)
			}
			var kind string
			if err := s.App.DB.QueryRow(`SELECT kind FROM notifications WHERE user_id = $1`, ann.ID).Scan(&kind); err != nil || kind != "webhook.failing" {
				t.Errorf("notification: %q %v", kind, err)
			}
			// The owner is emailed through the notification (email is on for
			// webhook.failing by default).
			s.SendNotifications(t)
			if got := mails.Messages(); len(got) != 1 || !slices.Contains(got[0].To, "ann@example.com") || !strings.Contains(got[0].Data, bad.URL) {
				t.Errorf("emails to the owner: %+v", got)
			}
			r := api(t, s, "GET", "/api/v1/webhooks/"+hBad.ID+"/deliveries?status=failed", key, "")
			var log struct {
				Data []struct {
					ID       string `json:"id"`
					Attempts []struct {
						StatusCode  *int    `json:"status_code"`
						StartedAt   string  `json:"started_at"`
						NextRetryAt *string `json:"next_retry_at"`
					} `json:"attempts"`
				}
			}
			if err := json.Unmarshal(r.Body, &log); err != nil || len(log.Data) != 1 || len(log.Data[0].Attempts) != 3 {
				t.Fatalf("failed deliveries: %s", r.Body)
			}
			if a := log.Data[0].Attempts; a[0].NextRetryAt == nil || a[2].NextRetryAt != nil {
				t.Errorf("next_retry_at of the attempts: %s", r.Body)
			}

			// A manual retry that succeeds reactivates.
			answer.Store(200)
			r = api(t, s, "POST", "/api/v1/webhooks/"+hBad.ID+"/deliveries/"+log.Data[0].ID+"/retry", key, "")
			if r.Status != 200 || str(r.JSON(t), "status") != "succeeded" {
				t.Fatalf("retry: %d %s", r.Status, r.Body)
			}
			if st := get(hBad.ID); st["status"] != "active" || st["failing_since"] != nil {
				t.Errorf("after a successful retry: %v", st)
			}

			// Rotation: both secrets sign for 24 hours.
			r = api(t, s, "POST", "/api/v1/webhooks/"+hBad.ID+"/rotate-secret", key, "")
			newSecret := str(r.JSON(t), "secret")
			if r.Status != 200 || newSecret == "" || newSecret == hBad.Secret {
				t.Fatalf("rotate: %d %s", r.Status, r.Body)
			}
			before := attempts()
			patch("A2")
			apptest.WaitFor(t, "a delivery after rotation", func() bool { return attempts() == before+1 })
			rec := bad.Deliveries()[before]
			if sigs := strings.Fields(rec.Header.Get("webhook-signature")); len(sigs) != 2 {
				t.Errorf("signatures after rotation: %q", rec.Header.Get("webhook-signature"))
			}
			verifySignature(t, hBad.Secret, rec)
			verifySignature(t, newSecret, rec)

			// Pause holds deliveries; resume sends them.
			if r := api(t, s, "POST", "/api/v1/webhooks/"+hBad.ID+"/pause", key, ""); str(r.JSON(t), "disabled_reason") != "paused" {
				t.Fatalf("pause: %s", r.Body)
			}
			before = attempts()
			patch("A3")
			settleOutbox(t, s)
			time.Sleep(300 * time.Millisecond)
			if attempts() != before {
				t.Error("a paused endpoint received a delivery")
			}
			if r := api(t, s, "POST", "/api/v1/webhooks/"+hBad.ID+"/resume", key, ""); str(r.JSON(t), "status") != "active" {
				t.Fatalf("resume: %s", r.Body)
			}
			apptest.WaitFor(t, "the held delivery", func() bool { return attempts() == before+1 })

			// 410 Gone disables at once.
			answer.Store(410)
			patch("A4")
			apptest.WaitFor(t, "disabled by 410", func() bool { return get(hBad.ID)["disabled_reason"] == "gone" })
			api(t, s, "POST", "/api/v1/webhooks/"+hBad.ID+"/resume", key, "")

			// Five days of continuous failure disable.
			answer.Store(503)
			patch("A5")
			apptest.WaitFor(t, "the failure clock", func() bool { return get(hBad.ID)["failing_since"] != nil })
			s.Clock.Advance(5*24*time.Hour + time.Minute)
			patch("A6")
			apptest.WaitFor(t, "disabled after 5 days", func() bool { return get(hBad.ID)["disabled_reason"] == "failing" })

			// Retry every failed delivery since a time (the one refused with
			// 410); its success reactivates the endpoint, and the deliveries
			// held while it was disabled go out.
			answer.Store(200)
			since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
			r = api(t, s, "POST", "/api/v1/webhooks/"+hBad.ID+"/deliveries/retry", key, `{"since":"`+since+`"}`)
			if r.Status != 200 || r.JSON(t)["queued"].(float64) < 1 {
				t.Fatalf("bulk retry: %d %s", r.Status, r.Body)
			}
			apptest.WaitFor(t, "reactivation", func() bool { return get(hBad.ID)["status"] == "active" })

			// A test delivery answers with the endpoint's answer.
			r = api(t, s, "POST", "/api/v1/webhooks/"+hGood.ID+"/test", key, `{"event_type":"match.created"}`)
			var td struct {
				Test     bool `json:"test"`
				Status   string
				Attempts []struct {
					StatusCode *int `json:"status_code"`
				}
			}
			if err := json.Unmarshal(r.Body, &td); err != nil || !td.Test || td.Status != "succeeded" || len(td.Attempts) != 1 || *td.Attempts[0].StatusCode != 200 {
				t.Errorf("test delivery: %d %s", r.Status, r.Body)
			}
			last := good.Deliveries()[len(good.Deliveries())-1]
			if parseEnvelope(t, last.Body).Type != "match.created" {
				t.Errorf("test body: %s", last.Body)
			}
			wh, _ := webhook.New(hGood.Secret)
			wh.Now = s.Clock.Now // five days ahead of the wall clock by now
			if err := wh.Verify(last.Body, last.Header); err != nil {
				t.Errorf("test signature: %v", err)
			}
			wantProblem(t, s, api(t, s, "POST", "/api/v1/webhooks/"+hGood.ID+"/test", key, `{"event_type":"user.nope"}`), 422, "unknown_event_type", "event_type")
		})
	}
}

// settleOutbox waits until the webhooks consumer has fanned out every event.
func settleOutbox(t *testing.T, s *apptest.Server) {
	t.Helper()
	apptest.WaitFor(t, "fan-out", func() bool {
		n, err := s.App.Outbox.Pending(t.Context(), "webhooks")
		return err == nil && n == 0
	})
}
