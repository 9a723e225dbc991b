package apptest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/config"
)

// RunWebhooks runs the delivery worker in the background until the test ends.
func (s *Server) RunWebhooks(t testing.TB) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.App.RunWebhooks(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// CA is a certificate authority of a test, and a certificate it signed for
// 127.0.0.1 and localhost.
type CA struct {
	File     string // the CA certificate (PEM), for MATCHPOINT_WEBHOOK_CA_FILE
	CertFile string // the server certificate chain (PEM)
	KeyFile  string // its PKCS#8 key (PEM)
	Cert     tls.Certificate
}

// NewCA makes a CA and a loopback server certificate in a temporary directory.
func NewCA(t testing.TB) *CA {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Matchpoint test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(key)
	dir := t.TempDir()
	c := &CA{File: filepath.Join(dir, "ca.pem"), CertFile: filepath.Join(dir, "cert.pem"), KeyFile: filepath.Join(dir, "key.pem")}
	write := func(path, typ string, b []byte) {
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(c.File, "CERTIFICATE", caDER)
	write(c.CertFile, "CERTIFICATE", der)
	write(c.KeyFile, "PRIVATE KEY", pkcs8)
	if c.Cert, err = tls.LoadX509KeyPair(c.CertFile, c.KeyFile); err != nil {
		t.Fatal(err)
	}
	return c
}

// Received is one request a Receiver got.
type Received struct {
	Header http.Header
	Body   []byte
	At     time.Time
	Status int // what the receiver answered
}

// Receiver is a webhook endpoint over HTTPS with a test CA's certificate.
// It answers verification challenges, and everything else with Respond
// (200 when Respond is nil), and keeps every request.
type Receiver struct {
	URL string
	CA  *CA
	// Respond decides the answer to a delivery; it may sleep or hijack.
	Respond func(w http.ResponseWriter, r *http.Request, body []byte) int
	// Challenge decides the answer to a challenge (echo when nil).
	Challenge func(challenge string) string

	mu  sync.Mutex
	got []Received
	srv *httptest.Server
}

// NewReceiver starts a receiver signed by ca (a new CA when nil).
func NewReceiver(t testing.TB, ca *CA) *Receiver {
	t.Helper()
	if ca == nil {
		ca = NewCA(t)
	}
	r := &Receiver{CA: ca}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	r.srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Cert}}
	r.srv.StartTLS()
	t.Cleanup(r.srv.Close)
	r.URL = "https://" + r.srv.Listener.Addr().String() + "/hook"
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	rec := Received{Header: req.Header.Clone(), Body: body, At: time.Now()}
	var probe struct {
		Type      string `json:"type"`
		Challenge string `json:"challenge"`
	}
	_ = json.Unmarshal(body, &probe)
	r.mu.Lock()
	respond, challenge := r.Respond, r.Challenge
	r.mu.Unlock()
	switch {
	case probe.Type == "webhook.verification":
		answer := probe.Challenge
		if challenge != nil {
			answer = challenge(answer)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"challenge": answer})
		rec.Status = 200
	case respond != nil:
		rec.Status = respond(w, req, body)
	default:
		w.WriteHeader(200)
		rec.Status = 200
	}
	r.mu.Lock()
	r.got = append(r.got, rec)
	r.mu.Unlock()
}

// SetRespond replaces the delivery answer.
func (r *Receiver) SetRespond(fn func(w http.ResponseWriter, r *http.Request, body []byte) int) {
	r.mu.Lock()
	r.Respond = fn
	r.mu.Unlock()
}

// SetChallenge replaces the challenge answer.
func (r *Receiver) SetChallenge(fn func(string) string) {
	r.mu.Lock()
	r.Challenge = fn
	r.mu.Unlock()
}

// Requests returns every request so far, challenges included.
func (r *Receiver) Requests() []Received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Received(nil), r.got...)
}

// Deliveries returns the requests that were not challenges.
func (r *Receiver) Deliveries() []Received {
	var out []Received
	for _, rec := range r.Requests() {
		var probe struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(rec.Body, &probe)
		if probe.Type != "webhook.verification" {
			out = append(out, rec)
		}
	}
	return out
}

// WebhookConfig allows loopback endpoints and trusts ca, for StartWith.
func WebhookConfig(ca *CA, schedule string) Options {
	return Options{Configure: func(c *config.Config, _ *app.Options) {
		c.WebhookAllowPrivate, c.WebhookCAFile, c.WebhookRetrySchedule = true, ca.File, schedule
	}}
}

// WaitFor polls cond every 20 ms until it holds or 20 s pass.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	WaitUpTo(t, 20*time.Second, what, cond)
}

// WaitUpTo polls cond every 20 ms until it holds or limit passes.
func WaitUpTo(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ResetConnection ends the request's connection with a TCP reset, as a
// crashing receiver would.
func ResetConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*tls.Conn); ok {
		if tcp, ok := tc.NetConn().(*net.TCPConn); ok {
			_ = tcp.SetLinger(0)
		}
		_ = tc.NetConn().Close()
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// WebhookEnv is the environment of a service process that delivers to
// loopback receivers signed by ca, with a short retry schedule and timeout.
func WebhookEnv(ca *CA, schedule, timeout string) []string {
	env := []string{"MATCHPOINT_WEBHOOK_ALLOW_PRIVATE=true", "MATCHPOINT_WEBHOOK_CA_FILE=" + ca.File}
	if schedule != "" {
		env = append(env, "MATCHPOINT_WEBHOOK_RETRY_SCHEDULE="+schedule)
	}
	if timeout != "" {
		env = append(env, "MATCHPOINT_WEBHOOK_TIMEOUT="+timeout)
	}
	return env
}

// OpenApp assembles the service in the test process over a database that
// service processes use, for fixtures and for reading what they wrote.
func OpenApp(t testing.TB, dbURL string) *app.App {
	t.Helper()
	a, err := app.Open(context.Background(), config.Config{DatabaseURL: dbURL, BaseURL: "http://127.0.0.1", DocsURL: "http://127.0.0.1/docs/errors"},
		app.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}
