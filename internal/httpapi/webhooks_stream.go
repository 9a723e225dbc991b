package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/matchpoint-api/matchpoint/internal/auth"
)

// StreamDelivery is one message of a webhook stream.
type StreamDelivery struct {
	DeliveryID string `json:"delivery_id"`
	EventID    string `json:"event_id" doc:"Send it as webhook-id"`
	EventType  string `json:"event_type"`
	Body       string `json:"body" doc:"The exact body to forward (the JSON envelope, as a string)"`
}

// Stream timings: how often the deliveries table is read for a stream, and
// how often a comment line keeps proxies from closing an idle connection.
const (
	streamPoll      = 250 * time.Millisecond
	streamKeepAlive = 15 * time.Second
)

func (s *server) registerWebhookStream() {
	tags := []string{"Webhooks"}
	huma.Register(s.api, huma.Operation{
		OperationID: "stream-webhook", Method: http.MethodGet, Path: "/api/v1/webhooks/{id}/stream", Tags: tags,
		Summary: "Read a stream subscription",
		Description: "Server-sent events: one `delivery` event per delivery of a `transport: stream` subscription, with the exact body " +
			"to forward. Any node serves it (it reads the deliveries table). Acknowledge each with POST .../deliveries/{delivery_id}/ack; " +
			"one not acknowledged within a minute is sent again. This is what `matchpoint listen` reads. Scope: read." + webhooksBeta,
		Security: requires(auth.ScopeRead),
		Responses: map[string]*huma.Response{"200": {Description: "An event stream", Content: map[string]*huma.MediaType{
			"text/event-stream": {Schema: &huma.Schema{Type: "string", Description: "event: delivery\\ndata: <StreamDelivery JSON>"}}}}},
	}, func(ctx context.Context, in *WebhookParams) (*huma.StreamResponse, error) {
		sub, err := s.webhooks.OpenStream(ctx, principalOf(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return &huma.StreamResponse{Body: func(hctx huma.Context) {
			_, w := humago.Unwrap(hctx)
			rc := http.NewResponseController(w)
			hctx.SetHeader("Content-Type", "text/event-stream")
			hctx.SetHeader("Cache-Control", "no-store")
			hctx.SetHeader("X-Accel-Buffering", "no")
			hctx.SetStatus(http.StatusOK)
			write := func(text string) bool {
				_ = rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
				if _, err := fmt.Fprint(w, text); err != nil {
					return false
				}
				return rc.Flush() == nil
			}
			if !write(": stream of " + sub.ID + "\n\n") {
				return
			}
			owner := s.webhooks.NewStreamOwner()
			tick := time.NewTicker(streamPoll)
			defer tick.Stop()
			last := time.Now()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				items, err := s.webhooks.StreamNext(ctx, sub.ID, owner)
				if err != nil {
					if ctx.Err() == nil {
						Logger(ctx).Warn("webhook stream", "webhook_id", sub.ID, "error", err.Error())
						write("event: error\ndata: {\"error\":\"the stream failed; reconnect\"}\n\n")
					}
					return
				}
				for _, it := range items {
					b, _ := json.Marshal(StreamDelivery{DeliveryID: it.DeliveryID, EventID: it.EventID, EventType: it.EventType, Body: string(it.Body)})
					if !write("event: delivery\nid: " + it.DeliveryID + "\ndata: " + string(b) + "\n\n") {
						return
					}
				}
				if time.Since(last) >= streamKeepAlive {
					last = time.Now()
					if !write(": keep-alive\n\n") {
						return
					}
					_ = s.webhooks.TouchStream(ctx, sub.ID)
				}
			}
		}}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "ack-webhook-delivery", Method: http.MethodPost, Path: "/api/v1/webhooks/{id}/deliveries/{delivery_id}/ack", Tags: tags,
		Summary: "Acknowledge a streamed delivery",
		Description: "Records what the listener's local endpoint answered to a delivery read from a stream: the delivery succeeds on a 2xx " +
			"and fails otherwise (streamed deliveries are not retried). Scope: read." + webhooksBeta,
		Security: requires(auth.ScopeRead),
	}, func(ctx context.Context, in *struct {
		DeliveryParams
		Body struct {
			StatusCode int     `json:"status_code" minimum:"0" maximum:"999" doc:"The local endpoint's status; 0 when it did not answer"`
			DurationMS float64 `json:"duration_ms" minimum:"0"`
			Error      string  `json:"error,omitempty" maxLength:"512"`
		}
	}) (*struct{ Body WebhookDelivery }, error) {
		d, err := s.webhooks.Ack(ctx, principalOf(ctx), in.ID, in.DeliveryID, in.Body.StatusCode,
			time.Duration(in.Body.DurationMS*float64(time.Millisecond)), in.Body.Error)
		if err != nil {
			return nil, err
		}
		return &struct{ Body WebhookDelivery }{Body: deliveryOf(d)}, nil
	})
}
