package matchpoint

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Webhooks follow the Standard Webhooks scheme: headers webhook-id,
// webhook-timestamp (Unix seconds) and webhook-signature, which holds one
// or more space-separated "v1,<base64 HMAC-SHA256>" signatures of
// "<id>.<timestamp>.<body>" made with the subscription's secret ("whsec_"
// + base64 of the key). Two signatures appear during the day after a
// secret is rotated; one match is enough.

// WebhookTolerance is how far a webhook's timestamp may be from now.
const WebhookTolerance = 5 * time.Minute

// WebhookVerificationError says why a webhook was refused.
type WebhookVerificationError struct{ Reason string }

func (e *WebhookVerificationError) Error() string { return "matchpoint: webhook refused: " + e.Reason }

// WebhookEvent is a verified delivery: the envelope, with Data decoded into
// the kind's type (*MatchAcceptedEventData for match.accepted, ...) when
// the kind is known, and the raw data always.
type WebhookEvent struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Created time.Time       `json:"created"`
	RawData json.RawMessage `json:"data"`
	Data    any             `json:"-"`
}

// VerifyWebhook checks a delivery's signature and timestamp against secret
// and returns the parsed event. payload is the raw body, unchanged.
func VerifyWebhook(payload []byte, header http.Header, secret string) (*WebhookEvent, error) {
	return verifyWebhookAt(payload, header, secret, time.Now())
}

func verifyWebhookAt(payload []byte, header http.Header, secret string, now time.Time) (*WebhookEvent, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return nil, errors.New("matchpoint: invalid webhook secret")
	}
	id, ts, sigs := header.Get("webhook-id"), header.Get("webhook-timestamp"), header.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return nil, &WebhookVerificationError{"missing webhook-id, webhook-timestamp or webhook-signature header"}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return nil, &WebhookVerificationError{"invalid webhook-timestamp"}
	}
	at := time.Unix(sec, 0)
	if now.Sub(at) > WebhookTolerance {
		return nil, &WebhookVerificationError{"timestamp too old"}
	}
	if at.Sub(now) > WebhookTolerance {
		return nil, &WebhookVerificationError{"timestamp too far in the future"}
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(payload)
	want := m.Sum(nil)
	matched := false
	for _, s := range strings.Fields(sigs) {
		version, sig, ok := strings.Cut(s, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			matched = true
			break
		}
	}
	if !matched {
		return nil, &WebhookVerificationError{"no matching signature"}
	}
	ev := &WebhookEvent{}
	if err := json.Unmarshal(payload, ev); err != nil {
		return nil, &WebhookVerificationError{"body is not a JSON event: " + err.Error()}
	}
	if mk, ok := eventData[ev.Type]; ok && len(ev.RawData) > 0 {
		d := mk()
		if err := json.Unmarshal(ev.RawData, d); err != nil {
			return nil, &WebhookVerificationError{"data of " + ev.Type + ": " + err.Error()}
		}
		ev.Data = d
	}
	return ev, nil
}
