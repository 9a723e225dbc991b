package apns

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/notifications/push"
)

const deviceToken = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"

// fakeAPNs checks each request as Apple documents it and answers what the
// test queued (200 when nothing is queued).
type fakeAPNs struct {
	t       *testing.T
	pub     *ecdsa.PublicKey
	mu      sync.Mutex
	answers []answer
	got     []request
}

type answer struct {
	status int
	reason string
	header map[string]string
}

type request struct {
	header http.Header
	body   map[string]any
	iat    int64
	path   string
}

func (f *fakeAPNs) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := f.t
	if r.ProtoMajor != 2 {
		t.Errorf("APNs request over HTTP/%d, want HTTP/2", r.ProtoMajor)
	}
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/3/device/") {
		t.Errorf("%s %s", r.Method, r.URL.Path)
	}
	// authorization: bearer <ES256 JWT> with kid = key id, iss = team id.
	auth, ok := strings.CutPrefix(r.Header.Get("authorization"), "bearer ")
	if !ok {
		t.Errorf("authorization %q", r.Header.Get("authorization"))
	}
	parts := strings.Split(auth, ".")
	var hdr, claims map[string]any
	if len(parts) == 3 {
		h, _ := base64.RawURLEncoding.DecodeString(parts[0])
		c, _ := base64.RawURLEncoding.DecodeString(parts[1])
		_ = json.Unmarshal(h, &hdr)
		_ = json.Unmarshal(c, &claims)
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
		if len(sig) != 64 || !ecdsa.Verify(f.pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			t.Error("provider token signature does not verify with the .p8 key")
		}
	}
	if hdr["alg"] != "ES256" || hdr["kid"] != "ABC123DEFG" || claims["iss"] != "TEAM123456" {
		t.Errorf("token header %v claims %v", hdr, claims)
	}
	for k, want := range map[string]string{"apns-topic": "com.example.matchpoint", "apns-push-type": "alert"} {
		if got := r.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	var body map[string]any
	raw, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Errorf("body %s: %v", raw, err)
	}
	iat, _ := claims["iat"].(float64)
	f.mu.Lock()
	f.got = append(f.got, request{header: r.Header.Clone(), body: body, iat: int64(iat), path: r.URL.Path})
	var a answer
	if len(f.answers) > 0 {
		a, f.answers = f.answers[0], f.answers[1:]
	} else {
		a = answer{status: 200}
	}
	f.mu.Unlock()
	for k, v := range a.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("apns-id", "6D2F2F9C-0000-4000-8000-000000000001")
	w.WriteHeader(a.status)
	if a.reason != "" {
		_ = json.NewEncoder(w).Encode(map[string]string{"reason": a.reason})
	}
}

func setup(t *testing.T) (*Sender, *fakeAPNs, *clock.Fake) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	p8 := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	f := &fakeAPNs{t: t, pub: &key.PublicKey}
	srv := httptest.NewUnstartedServer(f)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	s, err := New(Config{Key: p8, KeyID: "ABC123DEFG", TeamID: "TEAM123456", Topic: "com.example.matchpoint", URL: srv.URL, RootCAs: pool, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return s, f, clk
}

var msg = push.Message{ID: "ntf_1", Kind: "message.new", Title: "Ann sent you a message", Body: "Tennis at 6?",
	Data: map[string]string{"conversation_id": "cnv_1"}, Count: 2, CollapseKey: "conversation:cnv_1", TTL: time.Hour, Urgent: true}

func TestSendShape(t *testing.T) {
	s, f, clk := setup(t)
	r := s.Send(t.Context(), push.Target{Platform: push.APNs, Token: deviceToken}, msg)
	if r.Status != push.Accepted {
		t.Fatalf("result %+v", r)
	}
	got := f.got[0]
	if got.path != "/3/device/"+deviceToken {
		t.Errorf("path %s", got.path)
	}
	for k, want := range map[string]string{"apns-priority": "10", "apns-collapse-id": "conversation:cnv_1",
		"apns-expiration": "1772370000"} {
		if v := got.header.Get(k); v != want {
			t.Errorf("%s = %q, want %q", k, v, want)
		}
	}
	aps, _ := got.body["aps"].(map[string]any)
	alert, _ := aps["alert"].(map[string]any)
	if alert["title"] != msg.Title || alert["body"] != msg.Body || aps["thread-id"] != "conversation:cnv_1" || got.body["notification_id"] != "ntf_1" {
		t.Errorf("body %v", got.body)
	}
	// The provider token is reused for 50 minutes, then renewed.
	clk.Advance(49 * time.Minute)
	s.Send(t.Context(), push.Target{Token: deviceToken}, msg)
	clk.Advance(2 * time.Minute)
	s.Send(t.Context(), push.Target{Token: deviceToken}, msg)
	if f.got[1].iat != f.got[0].iat || f.got[2].iat == f.got[0].iat {
		t.Errorf("token iat %d %d %d: want reuse, then renewal", f.got[0].iat, f.got[1].iat, f.got[2].iat)
	}
}

func TestResults(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers []answer
		want    push.Status
		tries   int
	}{
		{"unregistered", []answer{{status: 410, reason: "Unregistered"}}, push.Gone, 1},
		{"bad token", []answer{{status: 400, reason: "BadDeviceToken"}}, push.Gone, 1},
		{"payload", []answer{{status: 413, reason: "PayloadTooLarge"}}, push.Failed, 1},
		{"throttled", []answer{{status: 429, reason: "TooManyRequests", header: map[string]string{"Retry-After": "30"}}}, push.Retry, 1},
		{"unavailable", []answer{{status: 503, reason: "ServiceUnavailable"}}, push.Retry, 1},
		{"expired token renewed", []answer{{status: 403, reason: "ExpiredProviderToken"}, {status: 200}}, push.Accepted, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, f, _ := setup(t)
			f.answers = tc.answers
			r := s.Send(t.Context(), push.Target{Token: deviceToken}, msg)
			if r.Status != tc.want || len(f.got) != tc.tries {
				t.Fatalf("result %+v after %d requests; want %v after %d", r, len(f.got), tc.want, tc.tries)
			}
			if tc.name == "throttled" && r.RetryAfter != 30*time.Second {
				t.Errorf("Retry-After %v", r.RetryAfter)
			}
		})
	}
	s, f, _ := setup(t)
	if r := s.Send(t.Context(), push.Target{Token: "not-hex"}, msg); r.Status != push.Gone || len(f.got) != 0 {
		t.Errorf("a malformed token was sent: %+v", r)
	}
}
