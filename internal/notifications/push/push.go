// Package push holds what the push providers share: the message as a device
// receives it, the target, the outcome of a send, and the JWT signing that
// VAPID, APNs and the FCM token grant all use. Each provider is a package
// of its own (webpush, apns, fcm) implementing Provider.
package push

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// Platforms of push targets.
const (
	WebPush = "webpush"
	APNs    = "apns"
	FCM     = "fcm"
)

// Platforms lists every platform.
var Platforms = []string{WebPush, APNs, FCM}

// Message is one notification as it is pushed to a device. Devices belong to
// the notified person, so the body is included.
type Message struct {
	ID          string // the notification's id (ntf_...), for the app's acknowledgement
	Kind        string
	Title       string
	Body        string
	Data        map[string]string
	Count       int    // how many events a collapsed notification stands for
	CollapseKey string // a newer push with the same key replaces the older on the device
	Created     time.Time
	TTL         time.Duration // how long the provider may keep it for an offline device
	Urgent      bool          // wake the device (high priority)
}

// Target is where a push goes.
type Target struct {
	Platform string
	// Token is the Web Push endpoint URL, the APNs device token or the FCM
	// registration token.
	Token string
	// P256DH and Auth are a Web Push subscription's keys (base64url).
	P256DH, Auth string
}

// Status is what became of one send.
type Status int

const (
	Accepted Status = iota // the provider took the message
	Retry                  // a temporary failure: try again later
	Gone                   // the target no longer exists: remove it
	Failed                 // a permanent failure of this message: do not retry
)

func (s Status) String() string {
	return [...]string{"accepted", "retry", "gone", "failed"}[s]
}

// Result is the outcome of one send.
type Result struct {
	Status     Status
	RetryAfter time.Duration // the provider's Retry-After, when it gave one
	HTTPStatus int           // 0 when no answer came
	Reason     string        // the provider's error, for logs (never holds the token)
}

// Provider sends to one platform. Send never panics and always returns a
// Result; a context ending is a Retry.
type Provider interface {
	Platform() string
	Send(ctx context.Context, t Target, m Message) Result
}

// Payload is the JSON an app receives (the Web Push payload; APNs and FCM
// carry the same fields in their own envelopes).
type Payload struct {
	ID        string            `json:"id"`
	Kind      string            `json:"kind"`
	Title     string            `json:"title"`
	Body      string            `json:"body,omitempty"`
	Data      map[string]string `json:"data,omitempty"`
	Count     int               `json:"count"`
	CreatedAt string            `json:"created_at"`
}

// MaxBody bounds the body pushed: providers take about 4 KB of payload, and
// a push shows a line or two anyway.
const MaxBody = 1000

// PayloadOf is m's payload.
func PayloadOf(m Message) Payload {
	return Payload{ID: m.ID, Kind: m.Kind, Title: Truncate(m.Title, 300), Body: Truncate(m.Body, MaxBody), Data: m.Data,
		Count: m.Count, CreatedAt: wire.Time(m.Created)}
}

// JSON encodes m's payload.
func (m Message) JSON() []byte {
	b, _ := json.Marshal(PayloadOf(m)) // strings and a map of strings always encode
	return b
}

// Truncate cuts s to at most n bytes on a character boundary, with an
// ellipsis when it cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// RetryAfter reads a Retry-After header: seconds or an HTTP date.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// ByStatus is the usual reading of a provider's HTTP status when its body
// says nothing more precise.
func ByStatus(code int) Status {
	switch {
	case code >= 200 && code < 300:
		return Accepted
	case code == http.StatusNotFound || code == http.StatusGone:
		return Gone
	case code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500:
		return Retry
	}
	return Failed
}
