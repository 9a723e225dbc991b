package fcm

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/notifications/push"
)

// fakeGoogle is a token endpoint and an FCM send endpoint in one TLS
// server, checking requests as Google documents them.
type fakeGoogle struct {
	t       *testing.T
	pub     *rsa.PublicKey
	url     string
	mu      sync.Mutex
	grants  int
	tokens  []string // handed out, newest last
	sends   []map[string]any
	answers []func(w http.ResponseWriter)
}

func (f *fakeGoogle) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := f.t
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.URL.Path {
	case "/token":
		if err := r.ParseForm(); err != nil || r.Form.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
			t.Errorf("token request %v %v", r.Form, err)
		}
		parts := strings.Split(r.Form.Get("assertion"), ".")
		if len(parts) != 3 {
			t.Fatalf("assertion %q", r.Form.Get("assertion"))
		}
		var hdr, claims map[string]any
		h, _ := base64.RawURLEncoding.DecodeString(parts[0])
		c, _ := base64.RawURLEncoding.DecodeString(parts[1])
		_ = json.Unmarshal(h, &hdr)
		_ = json.Unmarshal(c, &claims)
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
		if err := rsa.VerifyPKCS1v15(f.pub, crypto.SHA256, sum[:], sig); err != nil {
			t.Errorf("assertion signature: %v", err)
		}
		if hdr["alg"] != "RS256" || hdr["kid"] != "key-1" || claims["iss"] != "push@matchpoint-test.iam.gserviceaccount.com" ||
			claims["scope"] != Scope || claims["aud"] != f.url+"/token" {
			t.Errorf("assertion header %v claims %v", hdr, claims)
		}
		iat, _ := claims["iat"].(float64)
		exp, _ := claims["exp"].(float64)
		if exp-iat != 3600 {
			t.Errorf("assertion lives %v s", exp-iat)
		}
		f.grants++
		tok := fmt.Sprintf("ya29.token-%d", f.grants)
		f.tokens = append(f.tokens, tok)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "expires_in": 3599, "token_type": "Bearer"})
	case "/v1/projects/matchpoint-test/messages:send":
		if got, want := r.Header.Get("Authorization"), "Bearer "+f.tokens[len(f.tokens)-1]; got != want {
			t.Errorf("Authorization %q, want %q", got, want)
		}
		var body map[string]any
		raw, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("send body %s", raw)
		}
		f.sends = append(f.sends, body)
		if len(f.answers) > 0 {
			a := f.answers[0]
			f.answers = f.answers[1:]
			a(w)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"name": "projects/matchpoint-test/messages/0:1"})
	default:
		t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
	}
}

func fcmError(status int, state, code string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		if status == 503 {
			w.Header().Set("Retry-After", "12")
		}
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": status, "message": "x", "status": state,
			"details": []map[string]string{{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": code}}}})
	}
}

func setup(t *testing.T) (*Sender, *fakeGoogle, *clock.Fake) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	f := &fakeGoogle{t: t, pub: &key.PublicKey}
	srv := httptest.NewTLSServer(f)
	t.Cleanup(srv.Close)
	f.url = srv.URL
	creds, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "matchpoint-test", "private_key_id": "key-1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "push@matchpoint-test.iam.gserviceaccount.com", "token_uri": srv.URL + "/token"})
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	clk := clock.NewFake(time.Now())
	s, err := New(Config{Credentials: creds, URL: srv.URL + "/v1/projects/matchpoint-test/messages:send", RootCAs: pool, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return s, f, clk
}

var msg = push.Message{ID: "ntf_1", Kind: "match.requested", Title: "Bob wants to play", Body: "Tennis",
	Data: map[string]string{"match_id": "mch_1", "from": "refused key"}, Count: 1, CollapseKey: "match:mch_1", TTL: 2 * time.Hour}

func TestSendShape(t *testing.T) {
	s, f, clk := setup(t)
	if r := s.Send(t.Context(), push.Target{Token: "fcm-registration-token-0123456789"}, msg); r.Status != push.Accepted {
		t.Fatalf("result %+v", r)
	}
	m, _ := f.sends[0]["message"].(map[string]any)
	note, _ := m["notification"].(map[string]any)
	data, _ := m["data"].(map[string]any)
	android, _ := m["android"].(map[string]any)
	if m["token"] != "fcm-registration-token-0123456789" || note["title"] != msg.Title || note["body"] != msg.Body {
		t.Errorf("message %v", m)
	}
	if data["notification_id"] != "ntf_1" || data["match_id"] != "mch_1" || data["count"] != "1" || data["from"] != nil {
		t.Errorf("data %v", data)
	}
	if android["collapse_key"] != "match:mch_1" || android["ttl"] != "7200s" || android["priority"] != "NORMAL" {
		t.Errorf("android %v", android)
	}
	// The access token is reused until a minute before it expires.
	s.Send(t.Context(), push.Target{Token: "fcm-registration-token-0123456789"}, msg)
	clk.Advance(59 * time.Minute)
	s.Send(t.Context(), push.Target{Token: "fcm-registration-token-0123456789"}, msg)
	if f.grants != 2 {
		t.Errorf("%d token grants, want 2", f.grants)
	}
}

func TestResults(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers []func(http.ResponseWriter)
		want    push.Status
		grants  int
	}{
		{"unregistered", []func(http.ResponseWriter){fcmError(404, "NOT_FOUND", "UNREGISTERED")}, push.Gone, 1},
		{"invalid", []func(http.ResponseWriter){fcmError(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT")}, push.Failed, 1},
		{"unavailable", []func(http.ResponseWriter){fcmError(503, "UNAVAILABLE", "UNAVAILABLE")}, push.Retry, 1},
		{"token refused, renewed", []func(http.ResponseWriter){fcmError(401, "UNAUTHENTICATED", "THIRD_PARTY_AUTH_ERROR")}, push.Accepted, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, f, _ := setup(t)
			f.answers = tc.answers
			r := s.Send(t.Context(), push.Target{Token: "fcm-registration-token-0123456789"}, msg)
			if r.Status != tc.want || f.grants != tc.grants {
				t.Fatalf("result %+v after %d grants; want %v after %d", r, f.grants, tc.want, tc.grants)
			}
			if tc.name == "unavailable" && r.RetryAfter != 12*time.Second {
				t.Errorf("Retry-After %v", r.RetryAfter)
			}
		})
	}
}

func TestCredentialsChecked(t *testing.T) {
	for _, c := range []string{`{}`, `not json`, `{"type":"service_account","project_id":"p","client_email":"a@b","private_key":"nope"}`,
		`{"type":"service_account","project_id":"p","client_email":"a@b","private_key":"x","token_uri":"http://insecure/token"}`} {
		if _, err := New(Config{Credentials: []byte(c)}); err == nil {
			t.Errorf("credentials %s accepted", c)
		}
	}
}
