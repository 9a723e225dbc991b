// Package fcm sends to Android (and other Firebase) devices through the FCM
// HTTP v1 API, authenticated with an OAuth 2.0 access token that a Google
// service account key obtains with the JWT bearer grant (RFC 7523) at the
// key file's token_uri.
package fcm

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/notifications/push"
)

// Scope is the OAuth scope of the FCM send API.
const Scope = "https://www.googleapis.com/auth/firebase.messaging"

// ServiceAccount is the part of a service account key file FCM needs.
type ServiceAccount struct {
	Type         string `json:"type"`
	ProjectID    string `json:"project_id"`
	PrivateKeyID string `json:"private_key_id"`
	PrivateKey   string `json:"private_key"`
	ClientEmail  string `json:"client_email"`
	TokenURI     string `json:"token_uri"`
}

// Config configures a Sender.
type Config struct {
	Credentials []byte // the service account key file (JSON)
	// URL overrides the send endpoint; default
	// https://fcm.googleapis.com/v1/projects/<project_id>/messages:send.
	URL     string
	RootCAs *x509.CertPool // nil: the system's
	Clock   clock.Clock
	Timeout time.Duration // per request; default 15 s
}

// Sender sends FCM messages.
type Sender struct {
	cfg    Config
	acct   ServiceAccount
	key    *rsa.PrivateKey
	url    string
	client *http.Client

	mu       sync.Mutex
	access   string
	obtained time.Time
	expires  time.Time
}

// New returns a sender for the service account in cfg.Credentials.
func New(cfg Config) (*Sender, error) {
	var a ServiceAccount
	if err := json.Unmarshal(cfg.Credentials, &a); err != nil {
		return nil, fmt.Errorf("fcm: credentials file: %w", err)
	}
	if a.Type != "service_account" || a.ClientEmail == "" || a.PrivateKey == "" || a.ProjectID == "" {
		return nil, errors.New("fcm: credentials file must be a service account key with project_id, client_email and private_key")
	}
	if a.TokenURI == "" {
		a.TokenURI = "https://oauth2.googleapis.com/token"
	}
	if u, err := url.Parse(a.TokenURI); err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, errors.New("fcm: token_uri must be an https URL")
	}
	k, err := push.ParsePrivateKey([]byte(a.PrivateKey))
	if err != nil {
		return nil, fmt.Errorf("fcm: private_key: %w", err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("fcm: private_key is not an RSA key")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 15 * time.Second
	}
	send := cfg.URL
	if send == "" {
		send = "https://fcm.googleapis.com/v1/projects/" + url.PathEscape(a.ProjectID) + "/messages:send"
	}
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:   true,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 32,
		IdleConnTimeout:     5 * time.Minute,
	}
	return &Sender{cfg: cfg, acct: a, key: rk, url: send, client: &http.Client{Transport: tr, Timeout: cfg.Timeout}}, nil
}

// Platform is push.FCM.
func (s *Sender) Platform() string { return push.FCM }

// accessToken returns a cached access token, or gets a new one a minute
// before the old one expires.
func (s *Sender) accessToken(ctx context.Context, renew bool) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Clock.Now()
	if s.access != "" && !renew && now.Add(time.Minute).Before(s.expires) && !now.Before(s.obtained) {
		return s.access, nil
	}
	assertion, err := push.SignRS256(s.key, map[string]string{"alg": "RS256", "typ": "JWT", "kid": s.acct.PrivateKeyID},
		map[string]any{"iss": s.acct.ClientEmail, "scope": Scope, "aud": s.acct.TokenURI,
			"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	if err != nil {
		return "", err
	}
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {assertion}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.acct.TokenURI, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := s.client.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		TokenType   string `json:"token_type"`
		Error       string `json:"error"`
	}
	_ = json.Unmarshal(raw, &tok)
	if res.StatusCode != http.StatusOK || tok.AccessToken == "" {
		return "", fmt.Errorf("token endpoint answered %d %s", res.StatusCode, tok.Error)
	}
	if tok.ExpiresIn <= 0 {
		tok.ExpiresIn = 3600
	}
	s.access, s.obtained, s.expires = tok.AccessToken, now, now.Add(time.Duration(tok.ExpiresIn)*time.Second)
	return s.access, nil
}

// message is the v1 API's Message, with the fields used here.
type message struct {
	Token        string            `json:"token"`
	Notification notification      `json:"notification"`
	Data         map[string]string `json:"data"`
	Android      android           `json:"android"`
}

type notification struct {
	Title string `json:"title"`
	Body  string `json:"body,omitempty"`
}

type android struct {
	CollapseKey  string              `json:"collapse_key,omitempty"`
	Priority     string              `json:"priority"`
	TTL          string              `json:"ttl"`
	Notification androidNotification `json:"notification"`
}

type androidNotification struct {
	Tag string `json:"tag,omitempty"` // replaces a shown notification with the same tag
}

// reserved are data keys FCM refuses.
func reserved(k string) bool {
	return k == "from" || k == "notification" || k == "message_type" || strings.HasPrefix(k, "google") || strings.HasPrefix(k, "gcm")
}

// Send posts m to the registration token.
func (s *Sender) Send(ctx context.Context, t push.Target, m push.Message) push.Result {
	p := push.PayloadOf(m)
	data := map[string]string{"notification_id": m.ID, "kind": m.Kind, "count": strconv.Itoa(m.Count), "created_at": p.CreatedAt}
	for k, v := range m.Data {
		if !reserved(k) {
			if _, taken := data[k]; !taken {
				data[k] = v
			}
		}
	}
	msg := message{Token: t.Token, Notification: notification{Title: p.Title, Body: p.Body}, Data: data,
		Android: android{CollapseKey: m.CollapseKey, Priority: "NORMAL", TTL: strconv.Itoa(max(int(m.TTL/time.Second), 0)) + "s",
			Notification: androidNotification{Tag: m.CollapseKey}}}
	if m.Urgent {
		msg.Android.Priority = "HIGH"
	}
	body, err := json.Marshal(map[string]any{"message": msg})
	if err != nil {
		return push.Result{Status: push.Failed, Reason: err.Error()}
	}
	r := s.post(ctx, body, false)
	if r.Status == push.Retry && r.HTTPStatus == http.StatusUnauthorized {
		// The access token was refused: get a new one and try again at once.
		r = s.post(ctx, body, true)
	}
	return r
}

func (s *Sender) post(ctx context.Context, body []byte, renew bool) push.Result {
	tok, err := s.accessToken(ctx, renew)
	if err != nil {
		return push.Result{Status: push.Retry, Reason: "access token: " + errText(err)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return push.Result{Status: push.Failed, Reason: err.Error()}
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	res, err := s.client.Do(req)
	if err != nil {
		return push.Result{Status: push.Retry, Reason: "post: " + errText(err)}
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	r := push.Result{HTTPStatus: res.StatusCode, RetryAfter: push.RetryAfter(res.Header, s.cfg.Clock.Now())}
	if res.StatusCode == http.StatusOK {
		r.Status = push.Accepted
		return r
	}
	code, status := errorCode(raw)
	r.Reason = fmt.Sprintf("FCM answered %d %s %s", res.StatusCode, status, code)
	switch {
	case code == "UNREGISTERED", code == "SENDER_ID_MISMATCH", res.StatusCode == http.StatusNotFound:
		r.Status = push.Gone
	case res.StatusCode == http.StatusUnauthorized, code == "THIRD_PARTY_AUTH_ERROR":
		r.Status = push.Retry
	default:
		r.Status = push.ByStatus(res.StatusCode)
	}
	return r
}

// errorCode reads the FcmError code and the status of an error answer.
func errorCode(raw []byte) (code, status string) {
	var e struct {
		Error struct {
			Status  string `json:"status"`
			Details []struct {
				Type      string `json:"@type"`
				ErrorCode string `json:"errorCode"`
			} `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return "", ""
	}
	for _, d := range e.Error.Details {
		if d.ErrorCode != "" {
			return d.ErrorCode, e.Error.Status
		}
	}
	return e.Error.Status, e.Error.Status
}

// ValidToken reports whether s could be a registration token.
func ValidToken(s string) bool {
	if len(s) < 16 || len(s) > 4096 {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r > '~' {
			return false
		}
	}
	return true
}

// errText drops the URL from a transport error.
func errText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}
