package httpapi

import (
	"encoding/json"
	"reflect"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/webhooks"
	"github.com/matchpoint-api/matchpoint/pkg/webhook"
)

// documentWebhooks writes every event type into the OpenAPI document's
// webhooks section (OpenAPI 3.1): the POST a subscriber receives, its
// signature headers, its body's schema and an example.
func (s *server) documentWebhooks() {
	oapi := s.api.OpenAPI()
	if oapi.Webhooks == nil {
		oapi.Webhooks = map[string]*huma.PathItem{}
	}
	reg := oapi.Components.Schemas
	example := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	headers := []*huma.Param{
		{Name: webhook.HeaderID, In: "header", Required: true, Description: "The event's id (whe_...), the same on every attempt: deduplicate on it",
			Schema: &huma.Schema{Type: "string"}},
		{Name: webhook.HeaderTimestamp, In: "header", Required: true, Description: "Unix seconds of this attempt; refuse messages older than 5 minutes",
			Schema: &huma.Schema{Type: "string"}},
		{Name: webhook.HeaderSignature, In: "header", Required: true, Description: "Space-separated `v1,<base64 HMAC-SHA256 of \"id.timestamp.body\">` " +
			"signatures with the endpoint's secret (two during the 24 hours after a rotation)", Schema: &huma.Schema{Type: "string"}},
	}
	for _, d := range webhooks.Docs(example) {
		data := reg.Schema(reflect.TypeOf(d.Example), true, "")
		env := &huma.Schema{Type: "object", Required: []string{"id", "type", "created", "data"},
			Description: "The envelope (API document, section 6.2) of " + d.Kind,
			Properties: map[string]*huma.Schema{
				"id":      {Type: "string", Description: "Event id (whe_...), also sent as webhook-id"},
				"type":    {Type: "string", Enum: []any{d.Kind}},
				"created": {Type: "string", Format: "date-time"},
				"data":    {Type: "object", Required: []string{d.Resource}, Properties: map[string]*huma.Schema{d.Resource: data}},
			}}
		body, _, _ := webhooks.ExamplePayload(d.Kind, example)
		var ex any
		_ = json.Unmarshal(body, &ex)
		readers := "Delivered to subscriptions whose credential can read it (scopes: "
		for i, sc := range webhooks.ReadScopes(d.Kind) {
			if i > 0 {
				readers += " or "
			}
			readers += sc
		}
		readers += ") and whose account may read what it is about, and to Enterprise admin subscriptions."
		if d.Kind == webhooks.KindFailing {
			readers = "Sent to the account's other active endpoints without being subscribed to."
		}
		oapi.Webhooks[d.Kind] = &huma.PathItem{Post: &huma.Operation{
			OperationID: "webhook-" + kebab(d.Kind), Summary: d.Summary, Tags: []string{"Webhooks"},
			Description: readers + " Answer 2xx within 15 seconds; anything else is retried (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, ±20 %).",
			Parameters:  headers,
			RequestBody: &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
				"application/json": {Schema: env, Example: ex}}},
			Responses: map[string]*huma.Response{"2XX": {Description: "Received; any other answer is retried"}},
		}}
	}
}

// kebab turns "user.created" into "user-created".
func kebab(kind string) string {
	b := []byte(kind)
	for i, c := range b {
		if c == '.' || c == '_' {
			b[i] = '-'
		}
	}
	return string(b)
}
