package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/matching"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/webhooks"
)

// chromiumPath finds Debian's Chromium (MATCHPOINT_CHROMIUM overrides). In
// CI its absence is a failure, not a skip: .ci/run installs it.
func chromiumPath(t *testing.T) string {
	if p := os.Getenv("MATCHPOINT_CHROMIUM"); p != "" {
		return p
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed; .ci/run installs it (apt-get install chromium)")
		}
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	return p
}

// tab is one browser tab on the service, recording every address the
// browser asks for.
type tab struct {
	t    *testing.T
	ctx  context.Context
	base string
	dir  string // screenshots

	mu   sync.Mutex
	urls []string
}

func newTab(t *testing.T, base, shots string) *tab {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	tb := &tab{t: t, ctx: ctx, base: base, dir: shots}
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			tb.mu.Lock()
			tb.urls = append(tb.urls, e.Request.URL)
			tb.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	return tb
}

func (b *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

func run[T any](b *tab, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.t.Fatalf("browser: %v", err)
	}
	return v
}

func (b *tab) open(path, waitFor string) {
	b.t.Helper()
	b.do(chromedp.Navigate(b.base+path), chromedp.WaitVisible(chromedp.CSS(waitFor)))
}

func (b *tab) text(sel string) string {
	b.t.Helper()
	return run(b, chromedp.Text(chromedp.CSS(sel)))
}

// shot saves the page at desktop and phone width, and checks that the
// phone-sized page needs no sideways scrolling.
func (b *tab) shot(name string) {
	b.t.Helper()
	for _, v := range []struct {
		suffix string
		w, h   int64
		mobile bool
	}{{"desktop", 1280, 900, false}, {"phone", 390, 844, true}} {
		vp := chromedp.EmulateViewport(v.w, v.h)
		if v.mobile {
			vp = chromedp.EmulateViewport(v.w, v.h, chromedp.EmulateMobile)
		}
		b.do(vp, chromedp.Sleep(100*time.Millisecond))
		png := run(b, chromedp.FullScreenshot(100))
		if err := os.WriteFile(filepath.Join(b.dir, name+"-"+v.suffix+".png"), png, 0o644); err != nil {
			b.t.Fatal(err)
		}
		if v.mobile {
			if fits := run(b, chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth + 1`)); !fits {
				b.t.Errorf("%s needs sideways scrolling on a phone", name)
			}
		}
	}
	b.do(chromedp.EmulateViewport(1280, 900))
}

// outside lists the addresses the browser asked for off the service,
// other than allowed prefixes.
func (b *tab) outside(allowed ...string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
next:
	for _, u := range b.urls {
		if strings.HasPrefix(u, b.base+"/") || strings.HasPrefix(u, "data:") || u == "about:blank" {
			continue
		}
		for _, a := range allowed {
			if strings.HasPrefix(u, a) {
				continue next
			}
		}
		out = append(out, u)
	}
	return out
}

// TestDashboardInBrowser drives the dashboard in headless Chromium: sign
// in, create and revoke a key with the keyboard, register an app and run
// its OAuth consent, create a webhook against a local HTTPS receiver, see
// it verified and a delivery in the log, make the receiver fail and retry
// from the page; screenshots of every page at desktop and phone width
// (under MATCHPOINT_SCREENSHOTS when set, else the test's temporary
// directory). No page may load anything from outside the service.
func TestDashboardInBrowser(t *testing.T) {
	chromiumPath(t)
	shots := os.Getenv("MATCHPOINT_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	ca := apptest.NewCA(t)
	rcv := apptest.NewReceiver(t, ca)
	s := apptest.StartWith(t, store.SQLite, apptest.WebhookConfig(ca, "1s,1s"))
	s.RunWebhooks(t)
	seed := s.SeedAnalytics(t, rcv)
	ctx := context.Background()

	// The app's redirect target: a loopback page that takes the code.
	codes := make(chan string, 1)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c := r.URL.Query().Get("code"); c != "" {
			codes <- c
		}
		fmt.Fprint(w, "<!doctype html><title>callback</title><p id=done>done</p>")
	}))
	defer cb.Close()

	b := newTab(t, s.URL, shots)
	// Signing in: the dashboard sends the browser to the sign-in page and back.
	b.open("/dashboard", `input[name="login"]`)
	b.do(chromedp.SendKeys(chromedp.CSS(`input[name="login"]`), seed.P1.Username),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), apptest.Password),
		chromedp.Click(chromedp.CSS(`form[action="/login"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`nav.dash`)))
	if loc := run(b, chromedp.Location()); loc != s.URL+"/dashboard" {
		t.Fatalf("after sign-in at %s", loc)
	}
	if got := b.text(`#requests-24h`); got != "7" {
		t.Errorf("overview figures: %q", got)
	}
	b.shot("dashboard")
	b.open("/dashboard/usage?granularity=day&group_by=credential", `table`)
	if got := b.text(`table`); !strings.Contains(got, seed.KeyP1ID) || !strings.Contains(got, seed.AppP1) {
		t.Errorf("usage per credential: %q", got)
	}
	b.shot("usage")

	// A key, created with the keyboard alone, then revoked.
	b.open("/dashboard/keys", `form[action="/dashboard/keys"]`)
	b.do(chromedp.Focus(chromedp.CSS(`form[action="/dashboard/keys"] input[name="name"]`)),
		chromedp.KeyEvent("Keyboard key"), chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.CSS(`#new-secret`)))
	secret := run(b, chromedp.Value(chromedp.CSS(`#new-secret`)))
	if r := api(t, s, "GET", "/v1/users/me", secret, ""); r.Status != 200 {
		t.Fatalf("the key made on the page: %d %s", r.Status, r.Body)
	}
	b.shot("keys")
	keys, err := s.App.Keys.List(ctx, seed.P1.ID, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	made := keys[len(keys)-1]
	b.do(chromedp.Click(chromedp.CSS(`form[action="/dashboard/keys/`+made.ID+`/revoke"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`.notice`)))
	if r := api(t, s, "GET", "/v1/users/me", secret, ""); r.Status != 401 {
		t.Fatalf("the revoked key: %d", r.Status)
	}

	// An app, registered here and authorised through its consent page.
	b.open("/dashboard/apps", `form[action="/dashboard/apps"]`)
	b.do(chromedp.SendKeys(chromedp.CSS(`form[action="/dashboard/apps"] input[name="name"]`), "Court Finder"),
		chromedp.SendKeys(chromedp.CSS(`textarea[name="redirect_uris"]`), cb.URL+"/cb"),
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/apps"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#new-secret`)))
	clientSecret := run(b, chromedp.Value(chromedp.CSS(`#new-secret`)))
	clientID := b.text(`#client-id`)
	b.shot("app")
	q := url.Values{"client_id": {clientID}, "redirect_uri": {cb.URL + "/cb"}, "response_type": {"code"}, "scope": {"read"}, "state": {"s1"}}
	b.open("/oauth/authorize?"+q.Encode(), `button[value="allow"]`)
	b.do(chromedp.Click(chromedp.CSS(`button[value="allow"]`)), chromedp.WaitVisible(chromedp.CSS(`#done`)))
	var code string
	select {
	case code = <-codes:
	case <-time.After(10 * time.Second):
		t.Fatal("no code reached the app")
	}
	tok := postForm(t, s, "/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {cb.URL + "/cb"}, "client_id": {clientID}, "client_secret": {clientSecret}})
	access := str(tok.JSON(t), "access_token")
	if r := api(t, s, "GET", "/v1/users/me", access, ""); r.Status != 200 {
		t.Fatalf("the app's token: %d %s", tok.Status, tok.Body)
	}
	b.open("/dashboard/apps/"+clientID, `#authorized`)
	if got := b.text(`#authorized`); got != "1" {
		t.Errorf("authorised users = %q", got)
	}
	b.open("/dashboard/apps", `table`)
	b.shot("apps")

	// A webhook against the local HTTPS receiver: verified, then a delivery.
	b.open("/dashboard/webhooks", `form[action="/dashboard/webhooks"]`)
	b.do(chromedp.SendKeys(chromedp.CSS(`input[name="url"]`), rcv.URL),
		chromedp.SendKeys(chromedp.CSS(`input[name="description"]`), "Court Finder backend"),
		chromedp.Click(chromedp.CSS(`input[name="events"][value="match.accepted"]`)),
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/webhooks"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#new-secret`)))
	subs, err := s.App.Webhooks.List(ctx, &auth.Principal{UserID: seed.P1.ID, FirstParty: true}, "", 10)
	if err != nil || len(subs) != 2 {
		t.Fatalf("subscriptions: %v %v", subs, err)
	}
	hookID := subs[1].ID
	s.Clock.Advance(2 * time.Second) // the challenge goes out a second after creation
	waitPage(t, b, "/dashboard/webhooks/"+hookID, `#status`, "active")
	p5 := s.Player(t, "player5", apptest.Player{Sports: []string{"tennis"}, Lat: 45.77, Lon: 4.84, RadiusKM: 100})
	acceptMatch(t, s, seed.P1.ID, p5.ID)
	waitPage(t, b, "/dashboard/webhooks/"+hookID, `ol.log`, "succeeded")
	b.shot("webhook")

	// The receiver fails: the delivery fails after its retries, and the
	// page's Retry sends it again once the receiver is back.
	rcv.SetRespond(func(w http.ResponseWriter, _ *http.Request, _ []byte) int { w.WriteHeader(503); return 503 })
	p6 := s.Player(t, "player6", apptest.Player{Sports: []string{"tennis"}, Lat: 45.78, Lon: 4.84, RadiusKM: 100})
	acceptMatch(t, s, seed.P1.ID, p6.ID)
	p := &auth.Principal{UserID: seed.P1.ID, FirstParty: true}
	apptest.WaitFor(t, "a failed delivery", func() bool {
		s.Clock.Advance(2 * time.Second)
		ds, err := s.App.Webhooks.Deliveries(ctx, p, hookID, webhooks.DeliveryFilter{Status: webhooks.DeliveryFailed}, "", 10)
		return err == nil && len(ds) == 1
	})
	b.open("/dashboard/webhooks/"+hookID+"?status=failed", `ol.log`)
	if got := b.text(`ol.log`); !strings.Contains(got, "HTTP 503") {
		t.Errorf("failed delivery log: %q", got)
	}
	b.shot("webhook-failed")
	rcv.SetRespond(nil)
	b.do(chromedp.Click(chromedp.CSS(`ol.log form button`)), chromedp.WaitVisible(chromedp.CSS(`.notice`)))
	apptest.WaitFor(t, "the retried delivery", func() bool {
		ds, err := s.App.Webhooks.Deliveries(ctx, p, hookID, webhooks.DeliveryFilter{Status: webhooks.DeliveryFailed}, "", 10)
		return err == nil && len(ds) == 0
	})
	waitPage(t, b, "/dashboard/webhooks/"+hookID+"?event_type=match.accepted", `ol.log`, "succeeded")
	b.open("/dashboard/webhooks", `table`)
	b.shot("webhooks")

	// The operators' page, in a browser of its own.
	op := newTab(t, s.URL, shots)
	op.open("/dashboard/admin", `input[name="login"]`)
	op.do(chromedp.SendKeys(chromedp.CSS(`input[name="login"]`), seed.Operator.Username),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), apptest.Password),
		chromedp.Click(chromedp.CSS(`form[action="/login"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`nav.dash`)))
	if got := op.text(`main`); !strings.Contains(got, "tennis") {
		t.Errorf("platform page: %q", got)
	}
	op.shot("admin")

	for _, tb := range []*tab{b, op} {
		if out := tb.outside(cb.URL + "/"); len(out) > 0 {
			t.Errorf("pages asked for addresses outside the service: %v", out)
		}
	}
	t.Logf("screenshots in %s", shots)
}

// waitPage reloads path until the element sel holds want.
func waitPage(t *testing.T, b *tab, path, sel, want string) {
	t.Helper()
	var last string
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		err := chromedp.Do(ctx, chromedp.Navigate(b.base+path), chromedp.WaitVisible(chromedp.CSS(sel)))
		if err == nil {
			last, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		}
		cancel()
		if err == nil && strings.Contains(last, want) {
			return
		}
		if time.Now().After(deadline) {
			body, _ := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS("body")))
			t.Fatalf("%s never showed %q in %s (last error %v): %s", path, want, sel, err, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// acceptMatch has from ask to and to accept.
func acceptMatch(t *testing.T, s *apptest.Server, from, to string) {
	t.Helper()
	m, err := s.App.Matching.Create(context.Background(), from, matching.Request{UserID: to})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.App.Matching.Accept(context.Background(), to, m.ID); err != nil {
		t.Fatal(err)
	}
}
