// Package webhook verifies the webhooks Matchpoint sends. They follow the
// Standard Webhooks scheme: three headers, webhook-id, webhook-timestamp
// (Unix seconds) and webhook-signature, which holds one or more
// space-separated "v1,<base64 HMAC-SHA256>" signatures of
// "<id>.<timestamp>.<body>" made with the endpoint's secret ("whsec_" +
// base64 of the key). Several signatures appear while a rotated secret is
// still valid; one match is enough.
//
//	wh, err := webhook.New(os.Getenv("MATCHPOINT_WEBHOOK_SECRET"))
//	...
//	body, _ := io.ReadAll(r.Body)
//	if err := wh.Verify(body, r.Header); err != nil {
//		http.Error(w, "bad signature", http.StatusBadRequest)
//		return
//	}
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names of the scheme.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretPrefix starts every endpoint secret.
const SecretPrefix = "whsec_"

// DefaultTolerance is how far a timestamp may be from now, either way:
// older messages are refused as possible replays.
const DefaultTolerance = 5 * time.Minute

// Errors of Verify.
var (
	ErrMissingHeaders   = errors.New("webhook: missing webhook-id, webhook-timestamp or webhook-signature header")
	ErrInvalidTimestamp = errors.New("webhook: invalid webhook-timestamp")
	ErrTooOld           = errors.New("webhook: timestamp too old")
	ErrTooNew           = errors.New("webhook: timestamp too far in the future")
	ErrNoMatch          = errors.New("webhook: no matching signature")
	ErrInvalidSecret    = errors.New("webhook: invalid secret")
)

// Webhook verifies and signs with one secret.
type Webhook struct {
	key []byte
	// Tolerance bounds the timestamp's distance from Now (DefaultTolerance).
	Tolerance time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// New returns a verifier for secret, with or without its "whsec_" prefix.
func New(secret string) (*Webhook, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || len(key) == 0 {
		return nil, ErrInvalidSecret
	}
	return &Webhook{key: key, Tolerance: DefaultTolerance}, nil
}

// Sign returns the signature header value of one message: "v1,<base64>".
func (w *Webhook) Sign(id string, ts time.Time, body []byte) string {
	return "v1," + base64.StdEncoding.EncodeToString(w.mac(id, strconv.FormatInt(ts.Unix(), 10), body))
}

func (w *Webhook) mac(id, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, w.key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks the headers of a received message against its raw body.
func (w *Webhook) Verify(body []byte, h http.Header) error {
	id, ts, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || ts == "" || sigs == "" {
		return ErrMissingHeaders
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrInvalidTimestamp
	}
	now := time.Now()
	if w.Now != nil {
		now = w.Now()
	}
	tol := w.Tolerance
	if tol <= 0 {
		tol = DefaultTolerance
	}
	at := time.Unix(sec, 0)
	if now.Sub(at) > tol {
		return ErrTooOld
	}
	if at.Sub(now) > tol {
		return ErrTooNew
	}
	want := w.mac(id, ts, body)
	for _, s := range strings.Fields(sigs) {
		version, sig, ok := strings.Cut(s, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrNoMatch
}
