package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/webhooks"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// Webhook is a webhook subscription. Secret is present only in the answers
// that create it and rotate it.
type Webhook struct {
	Object         string               `json:"object" enum:"webhook"`
	ID             string               `json:"id" example:"whk_068b2k3n1ytkbrg5q9v7x8m0cm"`
	URL            string               `json:"url,omitempty" doc:"The https endpoint (absent for stream subscriptions)"`
	Transport      string               `json:"transport" enum:"https,stream" doc:"https: POSTed to url; stream: read by matchpoint listen"`
	Events         []string             `json:"events" doc:"Event types and wildcards (user.*, match.*, ..., *)"`
	Description    string               `json:"description"`
	Status         string               `json:"status" enum:"pending_verification,active,failing,disabled"`
	DisabledReason string               `json:"disabled_reason,omitempty" enum:"paused,gone,failing,credential_revoked"`
	Secret         string               `json:"secret,omitempty" doc:"whsec_...: shown once, at creation and rotation"`
	PreviousSecret *string              `json:"previous_secret_expires_at,omitempty" format:"date-time" doc:"After a rotation: until when the previous secret also signs"`
	Verification   *WebhookVerification `json:"last_verification" doc:"The last challenge request and the endpoint's answer"`
	VerifiedAt     *string              `json:"verified_at" format:"date-time"`
	FailingSince   *string              `json:"failing_since" format:"date-time" doc:"Start of the current run of failed attempts"`
	CreatedAt      string               `json:"created_at" format:"date-time"`
	UpdatedAt      string               `json:"updated_at" format:"date-time"`
}

// WebhookVerification is one challenge request's outcome.
type WebhookVerification struct {
	AttemptedAt  string `json:"attempted_at" format:"date-time"`
	StatusCode   *int   `json:"status_code" doc:"The endpoint's HTTP status; null without an answer"`
	Error        string `json:"error,omitempty"`
	ResponseBody string `json:"response_body" doc:"The first 4 KiB of the answer"`
}

func optInt(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

func (s *server) webhookOf(w *webhooks.Subscription) Webhook {
	status, reason := w.EffectiveStatus()
	out := Webhook{Object: "webhook", ID: w.ID, URL: w.URL, Transport: w.Transport, Events: w.Events, Description: w.Description,
		Status: status, DisabledReason: reason, VerifiedAt: wire.OptTime(w.VerifiedAt), FailingSince: wire.OptTime(w.FailingSince),
		CreatedAt: wire.Time(w.CreatedAt), UpdatedAt: wire.Time(w.UpdatedAt)}
	if w.OldSecretEnc != "" && w.OldSecretUntil.After(w.UpdatedAt.Add(-time.Second)) {
		out.PreviousSecret = wire.OptTime(&w.OldSecretUntil)
	}
	if v := w.Verification; v != nil {
		out.Verification = &WebhookVerification{AttemptedAt: wire.Time(v.At), StatusCode: optInt(v.StatusCode), Error: v.Error, ResponseBody: v.Response}
	}
	return out
}

// WebhookDelivery is one event on its way to one endpoint.
type WebhookDelivery struct {
	Object         string           `json:"object" enum:"webhook_delivery"`
	ID             string           `json:"id" example:"dlv_068b2k3n1ytkbrg5q9v7x8m0cn"`
	WebhookID      string           `json:"webhook_id"`
	EventID        string           `json:"event_id" doc:"The envelope id, sent as webhook-id: the same on every attempt"`
	EventType      string           `json:"event_type"`
	Status         string           `json:"status" enum:"pending,succeeded,failed"`
	Test           bool             `json:"test" doc:"A test delivery of example data"`
	AttemptCount   int              `json:"attempt_count"`
	NextAttemptAt  *string          `json:"next_attempt_at" format:"date-time" doc:"When a pending delivery is tried next"`
	LastStatusCode *int             `json:"last_status_code"`
	LastError      string           `json:"last_error,omitempty"`
	CreatedAt      string           `json:"created_at" format:"date-time"`
	CompletedAt    *string          `json:"completed_at" format:"date-time"`
	Attempts       []WebhookAttempt `json:"attempts" doc:"Oldest first (the latest 25)"`
}

// WebhookAttempt is one try of a delivery.
type WebhookAttempt struct {
	Number       int     `json:"number"`
	StartedAt    string  `json:"started_at" format:"date-time"`
	DurationMS   float64 `json:"duration_ms"`
	StatusCode   *int    `json:"status_code" doc:"null when the endpoint did not answer"`
	Error        string  `json:"error,omitempty" doc:"timeout, connection refused, TLS, DNS, blocked address, or the status"`
	ResponseBody string  `json:"response_body" doc:"The first 4 KiB of the answer"`
	NextRetryAt  *string `json:"next_retry_at" format:"date-time"`
}

func deliveryOf(d *webhooks.Delivery) WebhookDelivery {
	out := WebhookDelivery{Object: "webhook_delivery", ID: d.ID, WebhookID: d.SubscriptionID, EventID: d.EventID, EventType: d.EventType,
		Status: d.Status, Test: d.Test, AttemptCount: d.Attempts, LastStatusCode: optInt(d.LastStatusCode), LastError: d.LastError,
		CreatedAt: wire.Time(d.CreatedAt), CompletedAt: wire.OptTime(d.CompletedAt), Attempts: []WebhookAttempt{}}
	if d.Status == webhooks.DeliveryPending {
		out.NextAttemptAt = wire.OptTime(&d.NextAttemptAt)
	}
	for _, a := range d.History {
		out.Attempts = append(out.Attempts, WebhookAttempt{Number: a.Number, StartedAt: wire.Time(a.StartedAt),
			DurationMS: float64(a.Duration.Microseconds()) / 1000, StatusCode: optInt(a.StatusCode), Error: a.Error,
			ResponseBody: a.Response, NextRetryAt: wire.OptTime(a.NextRetryAt)})
	}
	return out
}

// WebhookStats are a subscription's figures over two windows.
type WebhookStats struct {
	Object    string      `json:"object" enum:"webhook_stats"`
	WebhookID string      `json:"webhook_id"`
	LastHour  StatsWindow `json:"last_hour"`
	LastDay   StatsWindow `json:"last_day"`
}

// StatsWindow is one window's figures.
type StatsWindow struct {
	Deliveries struct {
		Pending   int64 `json:"pending"`
		Succeeded int64 `json:"succeeded"`
		Failed    int64 `json:"failed"`
	} `json:"deliveries" doc:"Deliveries created in the window, by status"`
	Attempts    int64    `json:"attempts"`
	SuccessRate *float64 `json:"success_rate" doc:"Successful attempts / attempts; null without attempts"`
	LatencyMS   struct {
		P50 float64 `json:"p50"`
		P95 float64 `json:"p95"`
		P99 float64 `json:"p99"`
	} `json:"latency_ms" doc:"Time to the endpoint's answer"`
}

func windowOf(st *webhooks.Stats) StatsWindow {
	var w StatsWindow
	w.Deliveries.Pending, w.Deliveries.Succeeded, w.Deliveries.Failed = st.Pending, st.Succeeded, st.Failed
	w.Attempts = st.Attempts
	if st.Attempts > 0 {
		r := float64(st.OKAttempts) / float64(st.Attempts)
		w.SuccessRate = &r
	}
	msOf := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	w.LatencyMS.P50, w.LatencyMS.P95, w.LatencyMS.P99 = msOf(st.P50), msOf(st.P95), msOf(st.P99)
	return w
}

type webhookOut struct {
	Location string `header:"Location"`
	Body     Webhook
}

// WebhookParams name a subscription in the path.
type WebhookParams struct {
	ID string `path:"id" maxLength:"64" doc:"whk_..."`
}

// DeliveryParams name a delivery in the path.
type DeliveryParams struct {
	ID         string `path:"id" maxLength:"64"`
	DeliveryID string `path:"delivery_id" maxLength:"64" doc:"dlv_..."`
}

// maturityHeader marks every response of a family that is not STABLE yet
// (DECISIONS.md, Maturity), errors included, whoever writes them.
func maturityHeader(level string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Matchpoint-Maturity", level)
		next.ServeHTTP(w, r)
	})
}

const webhooksBeta = " Webhooks are a BETA family: every response carries `Matchpoint-Maturity: beta`."

func (s *server) registerWebhooks() {
	tags := []string{"Webhooks"}
	huma.Register(s.api, huma.Operation{
		OperationID: "create-webhook", Method: http.MethodPost, Path: "/api/v1/webhooks", Tags: tags,
		Summary: "Subscribe a webhook endpoint",
		Description: "Registers an https endpoint for event types (or wildcards such as `user.*`; `*` for all). The answer holds `secret` " +
			"(`whsec_...`), shown this once. The subscription starts `pending_verification`: the service POSTs a signed " +
			"`{\"type\":\"webhook.verification\",\"challenge\":\"...\"}` a second later, and it becomes `active` when the endpoint answers 2xx " +
			"with JSON `{\"challenge\": <the same value>}`. The endpoint then receives the events its credential could read through the API: " +
			"`user.*` needs `read` or `profile`, `match.*` needs `matching` or `read`, `event.*` needs `events` or `read`, `message.*` and " +
			"`notification.*` need `read`; an event about something the account cannot read is never delivered, except to Enterprise " +
			"credentials with the `admin` scope, which receive every event. Asking for types the credential cannot read is refused (422, " +
			"`events`). `transport: \"stream\"` makes a subscription that `matchpoint listen` reads instead of an endpoint. Scope: write." + webhooksBeta,
		Security:      requires(auth.ScopeWrite),
		DefaultStatus: http.StatusCreated,
	}, func(ctx context.Context, in *struct {
		Body struct {
			URL         string   `json:"url,omitempty" maxLength:"2048" doc:"https address of the endpoint" example:"https://hooks.example.com/matchpoint"`
			Events      []string `json:"events" maxItems:"32" doc:"Event types of section 6.1 or wildcards" example:"[\"user.created\",\"match.*\"]"`
			Description string   `json:"description,omitempty" maxLength:"256"`
			Transport   string   `json:"transport,omitempty" enum:"https,stream" doc:"Default https"`
		}
	}) (*webhookOut, error) {
		sub, secret, err := s.webhooks.Create(ctx, principalOf(ctx), webhooks.Spec{URL: in.Body.URL, Events: in.Body.Events,
			Description: in.Body.Description, Transport: in.Body.Transport})
		if err != nil {
			return nil, err
		}
		out := s.webhookOf(sub)
		out.Secret = secret
		keepSecretOut(ctx, "secret")
		return &webhookOut{Location: "/api/v1/webhooks/" + sub.ID, Body: out}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "list-webhooks", Method: http.MethodGet, Path: "/api/v1/webhooks", Tags: tags,
		Summary:     "List your webhook endpoints",
		Description: "Oldest first. A third-party application sees only the endpoints it subscribed. Scope: read." + webhooksBeta,
		Security:    requires(auth.ScopeRead),
	}, func(ctx context.Context, in *struct{ ListParams }) (*struct{ Body List[Webhook] }, error) {
		if !validCursor("whk_", in.Cursor) {
			return nil, apperr.InvalidParam("cursor", "invalid_cursor", "cursor is not one this list returned")
		}
		subs, err := s.webhooks.List(ctx, principalOf(ctx), in.Cursor, in.Limit+1)
		if err != nil {
			return nil, err
		}
		return &struct{ Body List[Webhook] }{Body: listOf(subs, in.Limit, func(w *webhooks.Subscription) string { return w.ID }, s.webhookOf)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "get-webhook", Method: http.MethodGet, Path: "/api/v1/webhooks/{id}", Tags: tags,
		Summary:     "A webhook endpoint",
		Description: "With its status and the last verification attempt. Scope: read." + webhooksBeta,
		Security:    requires(auth.ScopeRead),
	}, func(ctx context.Context, in *WebhookParams) (*struct{ Body Webhook }, error) {
		sub, err := s.webhooks.Get(ctx, principalOf(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return &struct{ Body Webhook }{Body: s.webhookOf(sub)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "update-webhook", Method: http.MethodPatch, Path: "/api/v1/webhooks/{id}", Tags: tags,
		Summary:     "Update a webhook endpoint",
		Description: "Changes the fields sent. A new url goes back to `pending_verification` and is challenged again. Scope: write." + webhooksBeta,
		Security:    requires(auth.ScopeWrite),
	}, func(ctx context.Context, in *struct {
		WebhookParams
		Body struct {
			URL         *string  `json:"url,omitempty" maxLength:"2048"`
			Events      []string `json:"events,omitempty" maxItems:"32"`
			Description *string  `json:"description,omitempty" maxLength:"256"`
		}
	}) (*struct{ Body Webhook }, error) {
		sub, err := s.webhooks.Update(ctx, principalOf(ctx), in.ID, webhooks.Patch{URL: in.Body.URL, Events: in.Body.Events, Description: in.Body.Description})
		if err != nil {
			return nil, err
		}
		return &struct{ Body Webhook }{Body: s.webhookOf(sub)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "delete-webhook", Method: http.MethodDelete, Path: "/api/v1/webhooks/{id}", Tags: tags,
		Summary:       "Delete a webhook endpoint",
		Description:   "Stops deliveries at once and deletes the delivery log. Scope: write." + webhooksBeta,
		Security:      requires(auth.ScopeWrite),
		DefaultStatus: http.StatusNoContent,
	}, func(ctx context.Context, in *WebhookParams) (*struct{}, error) {
		return nil, s.webhooks.Delete(ctx, principalOf(ctx), in.ID)
	})

	for _, op := range []struct {
		id, path, summary, desc string
		fn                      func(context.Context, *auth.Principal, string) (*webhooks.Subscription, error)
	}{
		{"pause-webhook", "pause", "Pause a webhook endpoint", "The endpoint becomes `disabled` (`paused`). Events meanwhile are kept as pending deliveries and go out on resume.", s.webhooks.Pause},
		{"resume-webhook", "resume", "Resume a webhook endpoint", "Re-enables a paused or disabled endpoint (one never verified goes back to `pending_verification`).", s.webhooks.Resume},
		{"verify-webhook", "verify", "Send the verification challenge again", "Sends the challenge now and answers the endpoint with the attempt in `last_verification`; it becomes `active` when the answer holds the challenge.", s.webhooks.Verify},
	} {
		huma.Register(s.api, huma.Operation{
			OperationID: op.id, Method: http.MethodPost, Path: "/api/v1/webhooks/{id}/" + op.path, Tags: tags,
			Summary: op.summary, Description: op.desc + " Scope: write." + webhooksBeta, Security: requires(auth.ScopeWrite),
		}, func(ctx context.Context, in *WebhookParams) (*struct{ Body Webhook }, error) {
			sub, err := op.fn(ctx, principalOf(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			return &struct{ Body Webhook }{Body: s.webhookOf(sub)}, nil
		})
	}

	huma.Register(s.api, huma.Operation{
		OperationID: "rotate-webhook-secret", Method: http.MethodPost, Path: "/api/v1/webhooks/{id}/rotate-secret", Tags: tags,
		Summary: "Rotate a webhook endpoint's secret",
		Description: "The answer holds the new `secret`, shown this once. For 24 hours every delivery carries two signatures, " +
			"one per secret, so receivers switch without losing a message. Scope: write." + webhooksBeta,
		Security: requires(auth.ScopeWrite),
	}, func(ctx context.Context, in *WebhookParams) (*struct{ Body Webhook }, error) {
		sub, secret, err := s.webhooks.Rotate(ctx, principalOf(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		out := s.webhookOf(sub)
		out.Secret = secret
		keepSecretOut(ctx, "secret")
		return &struct{ Body Webhook }{Body: out}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "test-webhook", Method: http.MethodPost, Path: "/api/v1/webhooks/{id}/test", Tags: tags,
		Summary: "Send a test delivery",
		Description: "Sends a signed example event of the type asked for to the endpoint now, and answers the delivery with the " +
			"endpoint's answer. Test deliveries carry example data (never real records) and do not change the endpoint's status. Scope: write." + webhooksBeta,
		Security: requires(auth.ScopeWrite),
	}, func(ctx context.Context, in *struct {
		WebhookParams
		Body struct {
			EventType string `json:"event_type" example:"user.created"`
		}
	}) (*struct{ Body WebhookDelivery }, error) {
		d, err := s.webhooks.Test(ctx, principalOf(ctx), in.ID, in.Body.EventType)
		if err != nil {
			return nil, err
		}
		return &struct{ Body WebhookDelivery }{Body: deliveryOf(d)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "list-webhook-deliveries", Method: http.MethodGet, Path: "/api/v1/webhooks/{id}/deliveries", Tags: tags,
		Summary: "List an endpoint's deliveries",
		Description: "The delivery log, newest first, each with its attempts: status code, duration, error, the start of the answer and " +
			"the next retry time. Kept 30 days. Scope: read." + webhooksBeta,
		Security: requires(auth.ScopeRead),
	}, func(ctx context.Context, in *struct {
		WebhookParams
		ListParams
		Status    string    `query:"status" enum:"pending,succeeded,failed" doc:"Only deliveries in this status"`
		EventType string    `query:"event_type" maxLength:"64" doc:"Only this event type"`
		Since     time.Time `query:"created_since" doc:"Only deliveries created at or after this time (RFC 3339)"`
		Until     time.Time `query:"created_before" doc:"Only deliveries created before this time (RFC 3339)"`
	}) (*struct{ Body List[WebhookDelivery] }, error) {
		if !validCursor("dlv_", in.Cursor) {
			return nil, apperr.InvalidParam("cursor", "invalid_cursor", "cursor is not one this list returned")
		}
		f := webhooks.DeliveryFilter{Status: in.Status, EventType: in.EventType}
		if !in.Since.IsZero() {
			f.Since = &in.Since
		}
		if !in.Until.IsZero() {
			f.Until = &in.Until
		}
		ds, err := s.webhooks.Deliveries(ctx, principalOf(ctx), in.ID, f, in.Cursor, in.Limit+1)
		if err != nil {
			return nil, err
		}
		return &struct{ Body List[WebhookDelivery] }{Body: listOf(ds, in.Limit, func(d *webhooks.Delivery) string { return d.ID }, deliveryOf)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "get-webhook-delivery", Method: http.MethodGet, Path: "/api/v1/webhooks/{id}/deliveries/{delivery_id}", Tags: tags,
		Summary: "A delivery", Description: "With every attempt. Scope: read." + webhooksBeta, Security: requires(auth.ScopeRead),
	}, func(ctx context.Context, in *DeliveryParams) (*struct{ Body WebhookDelivery }, error) {
		d, err := s.webhooks.GetDelivery(ctx, principalOf(ctx), in.ID, in.DeliveryID)
		if err != nil {
			return nil, err
		}
		return &struct{ Body WebhookDelivery }{Body: deliveryOf(d)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "retry-webhook-delivery", Method: http.MethodPost, Path: "/api/v1/webhooks/{id}/deliveries/{delivery_id}/retry", Tags: tags,
		Summary: "Retry a delivery now",
		Description: "Sends the delivery again now, signed afresh with the same webhook-id, and answers it with the new attempt. A success " +
			"makes a failing or disabled endpoint active again. Scope: write." + webhooksBeta,
		Security: requires(auth.ScopeWrite),
	}, func(ctx context.Context, in *DeliveryParams) (*struct{ Body WebhookDelivery }, error) {
		d, err := s.webhooks.Retry(ctx, principalOf(ctx), in.ID, in.DeliveryID)
		if err != nil {
			return nil, err
		}
		return &struct{ Body WebhookDelivery }{Body: deliveryOf(d)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "retry-failed-webhook-deliveries", Method: http.MethodPost, Path: "/api/v1/webhooks/{id}/deliveries/retry", Tags: tags,
		Summary:     "Retry every failed delivery since a time",
		Description: "Queues one more attempt of each failed delivery created at or after `since`; they go out within seconds. Scope: write." + webhooksBeta,
		Security:    requires(auth.ScopeWrite),
	}, func(ctx context.Context, in *struct {
		WebhookParams
		Body struct {
			Since time.Time `json:"since" doc:"RFC 3339"`
		}
	}) (*struct {
		Body struct {
			Object string `json:"object" enum:"webhook_retry"`
			Queued int64  `json:"queued" doc:"How many deliveries were queued"`
		}
	}, error) {
		n, err := s.webhooks.RetryFailed(ctx, principalOf(ctx), in.ID, in.Body.Since)
		if err != nil {
			return nil, err
		}
		out := &struct {
			Body struct {
				Object string `json:"object" enum:"webhook_retry"`
				Queued int64  `json:"queued" doc:"How many deliveries were queued"`
			}
		}{}
		out.Body.Object, out.Body.Queued = "webhook_retry", n
		return out, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "get-webhook-stats", Method: http.MethodGet, Path: "/api/v1/webhooks/{id}/stats", Tags: tags,
		Summary: "An endpoint's delivery statistics",
		Description: "Over the last hour and the last day: deliveries by status, attempts, success rate, and p50/p95/p99 of the time to " +
			"the endpoint's answer. Scope: read." + webhooksBeta,
		Security: requires(auth.ScopeRead),
	}, func(ctx context.Context, in *WebhookParams) (*struct{ Body WebhookStats }, error) {
		hour, day, err := s.webhooks.Stats(ctx, principalOf(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return &struct{ Body WebhookStats }{Body: WebhookStats{Object: "webhook_stats", WebhookID: in.ID, LastHour: windowOf(hour), LastDay: windowOf(day)}}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "get-webhook-ip-ranges", Method: http.MethodGet, Path: "/api/v1/webhooks/ip-ranges", Tags: tags,
		Summary:     "Addresses webhooks come from",
		Description: "The ranges the service sends deliveries from, for endpoints that accept only known sources. No credential needed." + webhooksBeta,
		Metadata:    public(),
	}, func(ctx context.Context, _ *struct{}) (*struct {
		Body struct {
			Object string   `json:"object" enum:"ip_ranges"`
			CIDRs  []string `json:"cidrs" doc:"CIDR ranges; empty when the operator publishes none"`
		}
	}, error) {
		out := &struct {
			Body struct {
				Object string   `json:"object" enum:"ip_ranges"`
				CIDRs  []string `json:"cidrs" doc:"CIDR ranges; empty when the operator publishes none"`
			}
		}{}
		out.Body.Object, out.Body.CIDRs = "ip_ranges", s.webhooks.EgressIPs()
		if out.Body.CIDRs == nil {
			out.Body.CIDRs = []string{}
		}
		return out, nil
	})

	s.registerWebhookStream()
	s.documentWebhooks()
}
