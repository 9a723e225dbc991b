package bench

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
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/users"
	"github.com/matchpoint-api/matchpoint/internal/webhooks"
)

// WebhookOptions choose what "bench webhooks" measures.
type WebhookOptions struct {
	DatabaseURL string        // postgres://... (a fresh schema); empty: a temporary SQLite file
	Burst       int           // events recorded at once for the throughput figure
	Rate        int           // events per second of the steady run
	Duration    time.Duration // length of the steady run
}

// hookReceiver is a local HTTPS endpoint that notes when each event arrives.
type hookReceiver struct {
	url     string
	caFile  string
	srv     *http.Server
	got     atomic.Int64
	mu      sync.Mutex
	started map[string]time.Time // webhook-id -> when its change began
	lat     []time.Duration
}

func newReceiver(dir string) (*hookReceiver, error) {
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	caT := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bench CA"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caT, caT, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafT := &x509.Certificate{SerialNumber: big.NewInt(2), NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, leafT, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	r := &hookReceiver{caFile: filepath.Join(dir, "ca.pem"), started: map[string]time.Time{}}
	if err := os.WriteFile(r.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r.url = "https://" + ln.Addr().String() + "/hook"
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), TLSConfig: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}}
	go r.srv.ServeTLS(ln, "", "")
	return r, nil
}

func (r *hookReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var probe struct{ Type, Challenge string }
	_ = json.Unmarshal(body, &probe)
	if probe.Type == webhooks.KindVerification {
		_ = json.NewEncoder(w).Encode(map[string]string{"challenge": probe.Challenge})
		return
	}
	now := time.Now()
	id := req.Header.Get("webhook-id")
	r.mu.Lock()
	if t0, ok := r.started[id]; ok {
		r.lat = append(r.lat, now.Sub(t0))
		delete(r.started, id)
	}
	r.mu.Unlock()
	r.got.Add(1)
	w.WriteHeader(http.StatusOK)
}

// Webhooks measures delivery: a baseline of plain HTTPS POSTs to the same
// hookReceiver, then deliveries per second of a burst of events, then the time
// from the change to the hookReceiver's 200 at a steady rate.
func Webhooks(ctx context.Context, o WebhookOptions, out io.Writer) error {
	dir, err := os.MkdirTemp("", "matchpoint-bench-webhooks-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	engine, dbURL := "sqlite", "sqlite:"+filepath.Join(dir, "bench.db")
	if o.DatabaseURL != "" {
		u, drop, err := freshSchema(o.DatabaseURL)
		if err != nil {
			return err
		}
		defer drop()
		engine, dbURL = "postgres", u
	}
	rcv, err := newReceiver(dir)
	if err != nil {
		return err
	}
	defer rcv.srv.Close()
	cfg := config.Config{DatabaseURL: dbURL, BaseURL: "http://127.0.0.1", DocsURL: "http://127.0.0.1/docs/errors",
		WebhookAllowPrivate: true, WebhookCAFile: rcv.caFile}
	a, err := app.Open(ctx, cfg, app.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	defer a.Close()
	fmt.Fprintf(out, "matchpoint bench webhooks on %s: one HTTPS endpoint on loopback\n", engine)

	// Baseline: the hookReceiver itself, POSTed to directly with the same body.
	base := hookBaseline(rcv, 16, 3*time.Second)
	fmt.Fprintf(out, "%-44s %8.0f /s\n", "baseline: plain HTTPS POSTs, 16 clients", base)

	u, err := a.Users.Register(ctx, users.Registration{Email: "bench@example.com", Username: "bench", Password: benchPassword})
	if err != nil {
		return err
	}
	_, key, err := a.Keys.Create(ctx, apikeys.Spec{UserID: u.ID, Name: "bench", Scopes: []string{"read", "write"}})
	if err != nil {
		return err
	}
	p, err := a.Keys.Authenticate(ctx, key)
	if err != nil {
		return err
	}
	sub, _, err := a.Webhooks.Create(ctx, p, webhooks.Spec{URL: rcv.url, Events: []string{"*"}})
	if err != nil {
		return err
	}
	var stopWorker func()
	startWorker := func() {
		wctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { a.RunWebhooks(wctx); close(done) }()
		stopWorker = func() { stop(); <-done }
	}
	startWorker()
	defer func() { stopWorker() }()
	for deadline := time.Now().Add(10 * time.Second); ; {
		s, err := a.Webhooks.Get(ctx, p, sub.ID)
		if err == nil && s.Status == webhooks.StatusActive {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: the endpoint was not verified")
		}
		time.Sleep(20 * time.Millisecond)
	}
	wh := store.NewWebhooks(a.DB)
	event := func(n int) *outbox.Event {
		ev, _ := outbox.New(time.Now(), outbox.UserUpdated, u.ID, "user", map[string]any{"id": u.ID, "username": "bench", "n": n})
		return &ev
	}

	// Burst: a backlog of events recorded while no worker runs (as after an
	// outage, or a spike of changes); the figure is deliveries per second
	// from the worker's start to the last 200.
	fmt.Fprintf(os.Stderr, "burst of %d events...\n", o.Burst)
	stopWorker()
	rcv.got.Store(0)
	for i := 0; i < o.Burst; i += 500 {
		var evs []*outbox.Event
		for j := i; j < min(i+500, o.Burst); j++ {
			evs = append(evs, event(j))
		}
		if err := wh.AppendEvents(ctx, evs...); err != nil {
			return err
		}
	}
	t0 := time.Now()
	startWorker()
	for rcv.got.Load() < int64(o.Burst) {
		if time.Since(t0) > 5*time.Minute {
			return fmt.Errorf("bench: only %d of %d delivered", rcv.got.Load(), o.Burst)
		}
		time.Sleep(5 * time.Millisecond)
	}
	burst := time.Since(t0)
	rate := float64(o.Burst) / burst.Seconds()
	fmt.Fprintf(out, "%-44s %8.0f /s   (%d in %s; %.2f of baseline; target 2000)\n", "burst: deliveries per second of a backlog",
		rate, o.Burst, burst.Round(time.Millisecond), rate/base)

	// Steady: one change per transaction at o.Rate per second.
	fmt.Fprintf(os.Stderr, "steady %d events/s for %s...\n", o.Rate, o.Duration)
	rcv.got.Store(0)
	n := int(o.Duration.Seconds() * float64(o.Rate))
	tick := time.NewTicker(time.Second / time.Duration(o.Rate))
	for i := 0; i < n; i++ {
		<-tick.C
		ev := event(i)
		rcv.mu.Lock()
		rcv.started[ev.ID] = time.Now()
		rcv.mu.Unlock()
		if err := wh.AppendEvents(ctx, ev); err != nil {
			tick.Stop()
			return err
		}
	}
	tick.Stop()
	for t1 := time.Now(); rcv.got.Load() < int64(n); {
		if time.Since(t1) > time.Minute {
			return fmt.Errorf("bench: only %d of %d delivered", rcv.got.Load(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	rcv.mu.Lock()
	lat := slices.Clone(rcv.lat)
	rcv.mu.Unlock()
	slices.Sort(lat)
	if len(lat) == 0 {
		return fmt.Errorf("bench: no latency measured")
	}
	fmt.Fprintf(out, "%-44s p50 %6.1f ms   p99 %6.1f ms   (%d deliveries; target p99 < 250 ms)\n",
		fmt.Sprintf("steady %d events/s: change to hookReceiver's 200", o.Rate), ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100]), len(lat))
	return nil
}

// baseline is what the hookReceiver takes directly: POSTs per second from conc
// keep-alive clients.
func hookBaseline(r *hookReceiver, conc int, d time.Duration) float64 {
	pool, _ := x509.SystemCertPool()
	if pool == nil {
		pool = x509.NewCertPool()
	}
	pem, _ := os.ReadFile(r.caFile)
	pool.AppendCertsFromPEM(pem)
	c := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool},
		MaxIdleConnsPerHost: conc, MaxConnsPerHost: conc}}
	body := `{"id":"whe_x","type":"user.updated","created":"2026-01-01T00:00:00.000Z","data":{"user":{"id":"usr_x"}}}`
	st := run("baseline", conc, d, func(int) (bool, bool) {
		res, err := c.Post(r.url, "application/json", strings.NewReader(body))
		if err != nil {
			return false, true
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode == 200, true
	})
	return st.Rate()
}
