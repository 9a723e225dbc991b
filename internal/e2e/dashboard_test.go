package e2e

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
)

// dashSignIn signs the browser in as username through the sign-in page and
// lands on return_to.
func dashSignIn(t *testing.T, s *apptest.Server, b *apptest.Browser, username, returnTo string) *apptest.Page {
	t.Helper()
	p := b.Get(s.URL + "/login?" + url.Values{"return_to": {returnTo}}.Encode())
	return b.Submit(p.Form(t, "/login"), map[string]string{"login": username, "password": apptest.Password})
}

func wantPage(t *testing.T, p *apptest.Page, status int, contains ...string) {
	t.Helper()
	if p.Status != status {
		t.Fatalf("status %d, want %d\n%s", p.Status, status, p.Body)
	}
	csp := p.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
	for _, c := range contains {
		if !strings.Contains(p.Body, c) {
			t.Errorf("page lacks %q", c)
		}
	}
}

// TestDashboardPages drives every dashboard page over HTTP with the seeded
// scenario, on each engine: sign-in and return, the figures, keys, apps
// and webhooks managed through the forms, CSRF refusals, operator-only
// pages.
func TestDashboardPages(t *testing.T) {
	eachWebhookServer(t, "1s,1s", func(t *testing.T, s *apptest.Server, rcv *apptest.Receiver) {
		seed := s.SeedAnalytics(t, rcv)
		b := s.NewBrowser(t)
		if p := b.Get(s.URL + "/dashboard/keys"); p.Status != http.StatusSeeOther && p.Location == nil {
			// Followed to the sign-in page, which the browser shows.
			wantPage(t, p, http.StatusOK, `action="/login"`, `value="/dashboard/keys"`)
		}
		home := dashSignIn(t, s, b, seed.P1.Username, "/dashboard")
		wantPage(t, home, http.StatusOK, "player1", "Requests, last 24 hours</dt><dd id=\"requests-24h\">7</dd>", "<svg", "GET /v1/users/me/verification")

		usage := b.Get(s.URL + "/dashboard/usage?granularity=day&group_by=credential")
		wantPage(t, usage, http.StatusOK, seed.KeyP1ID, seed.AppP1)

		keys := b.Get(s.URL + "/dashboard/keys")
		wantPage(t, keys, http.StatusOK, "Backend")
		created := b.Submit(keys.Form(t, "/dashboard/keys"), map[string]string{"name": "Dashboard key", "scopes": "read"})
		wantPage(t, created, http.StatusCreated, "shown this once", "Dashboard key")
		secret := regexp.MustCompile(`value="(mpk_live_[A-Za-z0-9]+)"`).FindStringSubmatch(created.Body)
		if secret == nil {
			t.Fatalf("no key on the page")
		}
		if r := api(t, s, "GET", "/v1/users/me", secret[1], ""); r.Status != 200 {
			t.Fatalf("the new key: %d", r.Status)
		}
		id := regexp.MustCompile(`/dashboard/keys/(key_[0-9a-z]+)/revoke`).FindAllStringSubmatch(created.Body, -1)
		revoked := b.Submit(created.Form(t, "/dashboard/keys/"+id[len(id)-1][1]+"/revoke"), nil)
		wantPage(t, revoked, http.StatusOK, "was revoked")
		if r := api(t, s, "GET", "/v1/users/me", secret[1], ""); r.Status != 401 {
			t.Fatalf("the revoked key: %d", r.Status)
		}

		apps := b.Get(s.URL + "/dashboard/apps")
		wantPage(t, apps, http.StatusOK, "P1 App")
		app := b.Submit(apps.Form(t, "/dashboard/apps"), map[string]string{"name": "Court Finder", "redirect_uris": "https://courts.example/cb"})
		wantPage(t, app, http.StatusCreated, "Court Finder", "mps_", "Authorised users</dt><dd id=\"authorized\">0")
		bad := b.Submit(apps.Form(t, "/dashboard/apps"), map[string]string{"name": "Bad", "redirect_uris": "http://evil.example/cb"})
		wantPage(t, bad, http.StatusUnprocessableEntity, "redirect_uris[0]")
		p1app := b.Get(s.URL + "/dashboard/apps/" + seed.AppP1)
		wantPage(t, p1app, http.StatusOK, "Authorised users</dt><dd id=\"authorized\">1")
		saved := b.Submit(p1app.Form(t, "/dashboard/apps/"+seed.AppP1), map[string]string{"name": "P1 App renamed", "redirect_uris": "https://p1.example/cb\nhttps://p1.example/cb2"})
		wantPage(t, saved, http.StatusOK, "P1 App renamed", "Saved.")
		rotated := b.Submit(saved.Form(t, "/dashboard/apps/"+seed.AppP1+"/rotate"), nil)
		wantPage(t, rotated, http.StatusOK, "mps_")
		// A well-formed id of no app: the last character changed.
		noApp := seed.AppP1[:len(seed.AppP1)-1] + "0"
		if noApp == seed.AppP1 {
			noApp = seed.AppP1[:len(seed.AppP1)-1] + "1"
		}
		wantPage(t, b.Get(s.URL+"/dashboard/apps/"+noApp), http.StatusNotFound)

		hooks := b.Get(s.URL + "/dashboard/webhooks")
		wantPage(t, hooks, http.StatusOK, rcv.URL, "match.accepted")
		hook := b.Get(s.URL + "/dashboard/webhooks/" + seed.WebhookID)
		wantPage(t, hook, http.StatusOK, "active", "succeeded", "HTTP 200", "Last 24 hours", "<polyline")
		tested := b.Submit(hook.Form(t, "/dashboard/webhooks/"+seed.WebhookID+"/test"), map[string]string{"event_type": "event.created"})
		wantPage(t, tested, http.StatusOK, "Test event.created: succeeded", "HTTP 200")
		filtered := b.Get(s.URL + "/dashboard/webhooks/" + seed.WebhookID + "?status=failed")
		wantPage(t, filtered, http.StatusOK, "No deliveries match")

		// Another person's endpoint and the operators' page are not found.
		other := s.NewBrowser(t)
		dashSignIn(t, s, other, seed.P2.Username, "/dashboard")
		wantPage(t, other.Get(s.URL+"/dashboard/webhooks/"+seed.WebhookID), http.StatusNotFound)
		wantPage(t, other.Get(s.URL+"/dashboard/admin"), http.StatusNotFound)
		op := s.NewBrowser(t)
		wantPage(t, dashSignIn(t, s, op, seed.Operator.Username, "/dashboard/admin"), http.StatusOK, "Platform", "tennis", "10-25")

		// A form without its token, or from another site, is refused.
		f := keys.Form(t, "/dashboard/keys")
		f.Fields.Set("csrf_token", "forged")
		wantPage(t, b.Submit(f, map[string]string{"name": "x"}), http.StatusForbidden)
		b.Origin = "https://evil.example"
		wantPage(t, b.Submit(keys.Form(t, "/dashboard/keys"), map[string]string{"name": "x"}), http.StatusForbidden)
	})
}
