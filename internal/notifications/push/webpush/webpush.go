package webpush

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/egress"
	"github.com/matchpoint-api/matchpoint/internal/notifications/push"
)

// GenerateVAPIDKey returns a new VAPID private key: the P-256 scalar,
// base64url. The service makes one once and keeps it (an instance key), as
// browsers bind each subscription to the public key it was made with.
func GenerateVAPIDKey() (string, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	b, err := k.Bytes()
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// ParseVAPIDKey reads a key of GenerateVAPIDKey.
func ParseVAPIDKey(s string) (*ecdsa.PrivateKey, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("webpush: VAPID key: %w", err)
	}
	return ecdsa.ParseRawPrivateKey(elliptic.P256(), b)
}

// PublicKey is the application server key browsers subscribe with
// (applicationServerKey): the uncompressed point, base64url.
func PublicKey(k *ecdsa.PrivateKey) string {
	b, _ := k.PublicKey.Bytes() // a P-256 key always encodes
	return base64.RawURLEncoding.EncodeToString(b)
}

// Config configures a Sender.
type Config struct {
	Key *ecdsa.PrivateKey
	// Subject is the VAPID contact, a mailto: or https: URI (RFC 8292 2.1).
	Subject string
	// Client calls the push services: endpoints are addresses a user gave,
	// so it is the egress client that refuses private addresses.
	Client *http.Client
	Clock  clock.Clock
}

// Sender sends Web Push messages.
type Sender struct {
	cfg    Config
	public string
	mu     sync.Mutex
	tokens map[string]vapidToken // by audience
}

type vapidToken struct {
	jwt string
	exp time.Time
}

// New returns a sender.
func New(cfg Config) (*Sender, error) {
	if cfg.Key == nil {
		return nil, errors.New("webpush: no VAPID key")
	}
	if u, err := url.Parse(cfg.Subject); err != nil || (u.Scheme != "mailto" && u.Scheme != "https") {
		return nil, fmt.Errorf("webpush: VAPID subject %q must be a mailto: or https: URI", cfg.Subject)
	}
	if cfg.Client == nil {
		return nil, errors.New("webpush: no HTTP client")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	return &Sender{cfg: cfg, public: PublicKey(cfg.Key), tokens: map[string]vapidToken{}}, nil
}

// Platform is push.WebPush.
func (s *Sender) Platform() string { return push.WebPush }

// PublicKey is the key subscriptions must be made with.
func (s *Sender) PublicKey() string { return s.public }

// tokenLife is how long a VAPID JWT is valid: at most 24 hours (RFC 8292
// 2); a token is reused until it has less than an hour left.
const tokenLife = 12 * time.Hour

// token returns the VAPID JWT for the push service at audience.
func (s *Sender) token(audience string) (string, error) {
	now := s.cfg.Clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	// Reused while it has more than an hour left, and never when the clock
	// moved back so far that it would seem to live longer than it may.
	if t, ok := s.tokens[audience]; ok && t.exp.Sub(now) > time.Hour && t.exp.Sub(now) <= tokenLife {
		return t.jwt, nil
	}
	exp := now.Add(tokenLife)
	jwt, err := push.SignES256(s.cfg.Key, map[string]string{"typ": "JWT", "alg": "ES256"},
		map[string]any{"aud": audience, "exp": exp.Unix(), "sub": s.cfg.Subject})
	if err != nil {
		return "", err
	}
	if len(s.tokens) > 1000 {
		clear(s.tokens) // push services are few; this only bounds a pathological spread
	}
	s.tokens[audience] = vapidToken{jwt: jwt, exp: exp}
	return jwt, nil
}

// Topic is the Topic header of a collapse key: a newer message with the same
// topic replaces one the push service still holds (RFC 8030 5.4). Topics are
// at most 32 base64url characters, so the key is hashed.
func Topic(collapseKey string) string {
	sum := sha256.Sum256([]byte(collapseKey))
	return base64.RawURLEncoding.EncodeToString(sum[:])[:32]
}

// Send encrypts m for the subscription and posts it to its endpoint.
func (s *Sender) Send(ctx context.Context, t push.Target, m push.Message) push.Result {
	ua, err1 := DecodeKey(t.P256DH)
	auth, err2 := DecodeKey(t.Auth)
	if err1 != nil || err2 != nil {
		return push.Result{Status: push.Gone, Reason: "subscription keys are not base64url"}
	}
	body, err := Encrypt(ua, auth, m.JSON())
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return push.Result{Status: push.Failed, Reason: err.Error()}
		}
		// A key that is not a P-256 point can never be encrypted for.
		return push.Result{Status: push.Gone, Reason: err.Error()}
	}
	u, err := url.Parse(t.Token)
	if err != nil || u.Host == "" {
		return push.Result{Status: push.Gone, Reason: "endpoint is not a URL"}
	}
	audience := u.Scheme + "://" + u.Host
	jwt, err := s.token(audience)
	if err != nil {
		return push.Result{Status: push.Retry, Reason: "sign VAPID token: " + err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.Token, bytes.NewReader(body))
	if err != nil {
		return push.Result{Status: push.Gone, Reason: "endpoint is not a URL"}
	}
	ttl := max(int(m.TTL/time.Second), 0)
	req.Header.Set("TTL", strconv.Itoa(ttl))
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("Content-Encoding", "aes128gcm")
	req.Header.Set("Authorization", "vapid t="+jwt+", k="+s.public)
	if m.Urgent {
		req.Header.Set("Urgency", "high")
	} else {
		req.Header.Set("Urgency", "normal")
	}
	if m.CollapseKey != "" {
		req.Header.Set("Topic", Topic(m.CollapseKey))
	}
	res, err := s.cfg.Client.Do(req)
	if err != nil {
		if egress.Blocked(err) {
			// An endpoint that resolves to a private address is never called.
			return push.Result{Status: push.Gone, Reason: "endpoint address not allowed"}
		}
		return push.Result{Status: push.Retry, Reason: "post: " + errText(err)}
	}
	defer res.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(res.Body, 512))
	r := push.Result{Status: push.ByStatus(res.StatusCode), HTTPStatus: res.StatusCode,
		RetryAfter: push.RetryAfter(res.Header, s.cfg.Clock.Now())}
	if r.Status != push.Accepted {
		r.Reason = fmt.Sprintf("push service answered %d %s", res.StatusCode, bytes.TrimSpace(msg))
	}
	return r
}

// errText is an error without the URL net/http puts in it: the endpoint is
// a capability URL, which logs must not hold.
func errText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}
