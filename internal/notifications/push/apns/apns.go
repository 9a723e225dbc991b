// Package apns sends to Apple devices through the APNs provider API: HTTP/2
// to api.push.apple.com, authenticated with a token signed by the team's
// .p8 key (ES256 JWT with the key id and team id).
package apns

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/notifications/push"
)

// Production is the APNs host for apps from the App Store and TestFlight.
const Production = "https://api.push.apple.com"

// Config configures a Sender.
type Config struct {
	Key    []byte // the .p8 file
	KeyID  string // its 10-character key id
	TeamID string
	Topic  string // the app's bundle id
	URL    string // default Production
	// RootCAs are trusted for the APNs host; nil: the system's.
	RootCAs *x509.CertPool
	Clock   clock.Clock
	Timeout time.Duration // per request; default 15 s
}

// Sender sends to APNs over one HTTP/2 connection pool.
type Sender struct {
	cfg    Config
	key    *ecdsa.PrivateKey
	client *http.Client

	mu      sync.Mutex
	token   string
	tokenAt time.Time
}

// New returns a sender.
func New(cfg Config) (*Sender, error) {
	if cfg.KeyID == "" || cfg.TeamID == "" || cfg.Topic == "" {
		return nil, errors.New("apns: key id, team id and topic are all needed")
	}
	k, err := push.ParsePrivateKey(cfg.Key)
	if err != nil {
		return nil, fmt.Errorf("apns: key: %w", err)
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, errors.New("apns: the key is not an EC P-256 key")
	}
	if cfg.URL == "" {
		cfg.URL = Production
	}
	cfg.URL = strings.TrimRight(cfg.URL, "/")
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 15 * time.Second
	}
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:   true,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     10 * time.Minute,
	}
	// APNs speaks HTTP/2 only.
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetHTTP2(true)
	return &Sender{cfg: cfg, key: ek, client: &http.Client{Transport: tr, Timeout: cfg.Timeout}}, nil
}

// Platform is push.APNs.
func (s *Sender) Platform() string { return push.APNs }

// tokenEvery renews the provider token: APNs refuses tokens older than an
// hour and too frequent renewals (more than once per 20 minutes).
const tokenEvery = 50 * time.Minute

func (s *Sender) providerToken(renew bool) (string, error) {
	now := s.cfg.Clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != "" && !renew && now.Sub(s.tokenAt) < tokenEvery && !now.Before(s.tokenAt) {
		return s.token, nil
	}
	t, err := push.SignES256(s.key, map[string]string{"alg": "ES256", "kid": s.cfg.KeyID},
		map[string]any{"iss": s.cfg.TeamID, "iat": now.Unix()})
	if err != nil {
		return "", err
	}
	s.token, s.tokenAt = t, now
	return t, nil
}

// ValidToken reports whether s looks like an APNs device token: hex, 32
// bytes today (Apple reserves the right to make them longer).
func ValidToken(s string) bool {
	if len(s) < 64 || len(s) > 200 || len(s)%2 != 0 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// payload is the JSON body: the aps dictionary and the notification's fields.
type payload struct {
	APS            aps               `json:"aps"`
	NotificationID string            `json:"notification_id"`
	Kind           string            `json:"kind"`
	Count          int               `json:"count"`
	Data           map[string]string `json:"data,omitempty"`
}

type aps struct {
	Alert    alert  `json:"alert"`
	Sound    string `json:"sound,omitempty"`
	ThreadID string `json:"thread-id,omitempty"`
	Mutable  int    `json:"mutable-content,omitempty"`
}

type alert struct {
	Title string `json:"title"`
	Body  string `json:"body,omitempty"`
}

// collapseID fits a collapse key into the 64 bytes apns-collapse-id takes.
func collapseID(key string) string {
	if len(key) <= 64 {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// Send posts m to the device.
func (s *Sender) Send(ctx context.Context, t push.Target, m push.Message) push.Result {
	if !ValidToken(t.Token) {
		return push.Result{Status: push.Gone, Reason: "not an APNs device token"}
	}
	p := push.PayloadOf(m)
	body, err := json.Marshal(payload{
		APS:            aps{Alert: alert{Title: p.Title, Body: p.Body}, Sound: "default", ThreadID: m.CollapseKey, Mutable: 1},
		NotificationID: m.ID, Kind: m.Kind, Count: m.Count, Data: m.Data,
	})
	if err != nil {
		return push.Result{Status: push.Failed, Reason: err.Error()}
	}
	r := s.post(ctx, t.Token, m, body, false)
	if r.Status == push.Retry && r.Reason == "ExpiredProviderToken" {
		// Renew the token once and try again at once.
		r = s.post(ctx, t.Token, m, body, true)
	}
	return r
}

// post makes one request.
func (s *Sender) post(ctx context.Context, token string, m push.Message, body []byte, renew bool) push.Result {
	jwt, err := s.providerToken(renew)
	if err != nil {
		return push.Result{Status: push.Retry, Reason: "sign provider token: " + err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.URL+"/3/device/"+token, bytes.NewReader(body))
	if err != nil {
		return push.Result{Status: push.Failed, Reason: err.Error()}
	}
	now := s.cfg.Clock.Now()
	req.Header.Set("authorization", "bearer "+jwt)
	req.Header.Set("apns-topic", s.cfg.Topic)
	req.Header.Set("apns-push-type", "alert")
	req.Header.Set("apns-expiration", strconv.FormatInt(now.Add(m.TTL).Unix(), 10))
	if m.Urgent {
		req.Header.Set("apns-priority", "10")
	} else {
		req.Header.Set("apns-priority", "5")
	}
	if m.CollapseKey != "" {
		req.Header.Set("apns-collapse-id", collapseID(m.CollapseKey))
	}
	req.Header.Set("content-type", "application/json")
	res, err := s.client.Do(req)
	if err != nil {
		return push.Result{Status: push.Retry, Reason: "post: " + errText(err)}
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	var e struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(raw, &e) // a 200 has no body
	r := push.Result{HTTPStatus: res.StatusCode, Reason: e.Reason, RetryAfter: push.RetryAfter(res.Header, now)}
	switch {
	case res.StatusCode == http.StatusOK:
		r.Status = push.Accepted
	case res.StatusCode == http.StatusGone, e.Reason == "Unregistered", e.Reason == "BadDeviceToken", e.Reason == "DeviceTokenNotForTopic":
		// The token is no longer (or never was) valid for this app.
		r.Status = push.Gone
	case e.Reason == "ExpiredProviderToken":
		r.Status = push.Retry
	default:
		r.Status = push.ByStatus(res.StatusCode)
		if r.Reason == "" {
			r.Reason = fmt.Sprintf("APNs answered %d", res.StatusCode)
		}
	}
	return r
}

// errText drops the URL (it holds the device token) from a transport error.
func errText(err error) string {
	type unwrapper interface{ Unwrap() error }
	if u, ok := err.(unwrapper); ok && u.Unwrap() != nil {
		return u.Unwrap().Error()
	}
	return err.Error()
}
