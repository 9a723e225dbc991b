package e2e

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
)

// TestWebhookHTTPSReceiver: a real HTTPS receiver with its own CA answers
// the challenge; user.created and user.updated arrive as section 6.2
// envelopes, signed so that the Go helper and the official Standard
// Webhooks library both accept them; the log and the statistics show them.
func TestWebhookHTTPSReceiver(t *testing.T) {
	eachWebhookServer(t, "", func(t *testing.T, s *apptest.Server, rcv *apptest.Receiver) {
		_, key := enterprise(t, s, "ent")
		h := subscribe(t, s, key, `{"url":"`+rcv.URL+`","events":["user.created","user.updated"],"description":"all users"}`)

		bob := s.User(t, "bob")
		bobKey := keyOf(t, s.App, bob.ID, "read", "write")
		if r := api(t, s, "PATCH", "/v1/users/me", bobKey, `{"first_name":"Robert","sports":["tennis"]}`); r.Status != 200 {
			t.Fatalf("patch: %d %s", r.Status, r.Body)
		}
		apptest.WaitFor(t, "two deliveries", func() bool { return len(rcv.Deliveries()) >= 2 })
		got := rcv.Deliveries()
		// Deliveries to one endpoint run concurrently: order is not kept.
		slices.SortFunc(got, func(a, b apptest.Received) int {
			return strings.Compare(parseEnvelope(t, a.Body).Type, parseEnvelope(t, b.Body).Type)
		})
		if len(got) != 2 {
			t.Fatalf("got %d deliveries, want 2", len(got))
		}
		for i, want := range []string{"user.created", "user.updated"} {
			rec := got[i]
			env := parseEnvelope(t, rec.Body)
			if env.Type != want || !strings.HasPrefix(env.ID, "whe_") || rec.Header.Get("webhook-id") != env.ID {
				t.Errorf("delivery %d: type %q id %q header id %q", i, env.Type, env.ID, rec.Header.Get("webhook-id"))
			}
			if _, err := time.Parse(time.RFC3339, env.Created); err != nil || !strings.HasSuffix(env.Created, "Z") {
				t.Errorf("created %q is not RFC 3339 UTC", env.Created)
			}
			var user map[string]any
			if err := json.Unmarshal(env.Data["user"], &user); err != nil {
				t.Fatalf("data.user: %v in %s", err, rec.Body)
			}
			if user["id"] != bob.ID || user["username"] != "bob" || user["email"] != "bob@example.com" {
				t.Errorf("data.user = %v", user)
			}
			if want == "user.updated" && user["first_name"] != "Robert" {
				t.Errorf("user.updated first_name = %v", user["first_name"])
			}
			if ct := rec.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			verifySignature(t, h.Secret, rec)
		}
		verifyWithNode(t, h.Secret, got)

		// The delivery log and the statistics.
		apptest.WaitFor(t, "the log to record both", func() bool {
			r := api(t, s, "GET", "/api/v1/webhooks/"+h.ID+"/deliveries?status=succeeded", key, "")
			var l struct{ Data []map[string]any }
			_ = json.Unmarshal(r.Body, &l)
			return len(l.Data) == 2
		})
		r := api(t, s, "GET", "/api/v1/webhooks/"+h.ID+"/deliveries", key, "")
		var log struct {
			Data []struct {
				Status    string `json:"status"`
				EventType string `json:"event_type"`
				Attempts  []struct {
					StatusCode *int    `json:"status_code"`
					DurationMS float64 `json:"duration_ms"`
				} `json:"attempts"`
			}
		}
		if err := json.Unmarshal(r.Body, &log); err != nil || len(log.Data) != 2 {
			t.Fatalf("deliveries: %d %s", r.Status, r.Body)
		}
		if log.Data[0].EventType != "user.updated" || len(log.Data[0].Attempts) != 1 || *log.Data[0].Attempts[0].StatusCode != 200 {
			t.Errorf("newest delivery: %s", r.Body)
		}
		r = api(t, s, "GET", "/api/v1/webhooks/"+h.ID+"/stats", key, "")
		st := r.JSON(t)
		hour := st["last_hour"].(map[string]any)
		if hour["attempts"] != float64(2) || hour["success_rate"] != float64(1) {
			t.Errorf("stats: %s", r.Body)
		}
		// BETA marks every response of the family, errors included.
		r = api(t, s, "GET", "/api/v1/webhooks/whk_00000000000000000000000000", key, "")
		wantProblem(t, s, r, 404, "not_found", "")
		if r.Header.Get("Matchpoint-Maturity") != "beta" {
			t.Errorf("404 without Matchpoint-Maturity")
		}
		if r := api(t, s, "GET", "/api/v1/webhooks", "", ""); r.Status != 401 || r.Header.Get("Matchpoint-Maturity") != "beta" {
			t.Errorf("401: %d maturity %q", r.Status, r.Header.Get("Matchpoint-Maturity"))
		}
		if r := api(t, s, "GET", "/api/v1/webhooks/ip-ranges", "", ""); r.Status != http.StatusOK {
			t.Errorf("ip-ranges: %d %s", r.Status, r.Body)
		}
		// Every event type's payload is in the OpenAPI document, with an example.
		r = api(t, s, "GET", "/openapi.json", "", "")
		var doc struct {
			Webhooks map[string]struct {
				Post struct {
					RequestBody struct {
						Content map[string]struct {
							Example map[string]any `json:"example"`
						} `json:"content"`
					} `json:"requestBody"`
				} `json:"post"`
			} `json:"webhooks"`
		}
		if err := json.Unmarshal(r.Body, &doc); err != nil {
			t.Fatal(err)
		}
		for _, kind := range append(slices.Clone(outbox.Kinds), "webhook.failing") {
			ex := doc.Webhooks[kind].Post.RequestBody.Content["application/json"].Example
			if ex["type"] != kind || ex["data"] == nil {
				t.Errorf("OpenAPI webhooks[%s]: example %v", kind, ex)
			}
		}
	})
}
