package e2e

import (
	"net/url"
	"strings"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
)

// TestSecurityLog runs the service's security-relevant paths with a log
// that keeps everything (debug level) and checks two things: each security
// event is there with the client IP and the request id (ASVS 7.2), and no
// secret the run used appears anywhere in the log (ASVS 7.1).
func TestSecurityLog(t *testing.T) {
	eachBehindProxy(t, func(t *testing.T, s *apptest.Server, log *logBuffer) {
		var secrets []string
		keep := func(v ...string) {
			for _, x := range v {
				if x == "" {
					t.Fatal("a secret the test meant to keep is empty")
				}
				secrets = append(secrets, x)
			}
		}
		const ip = "198.51.100.23"
		b := from(t, s, ip)

		// Sign-up, then a wrong password and a password typed into the login field.
		password := "my own secret words 42"
		form := b.Get(s.URL+"/signup").Form(t, "/signup")
		keep(password, form.Fields.Get("csrf_token"))
		if p := b.Submit(form, map[string]string{"email": "logged@example.com", "username": "logged", "password": password}); p.Status != 200 {
			t.Fatalf("sign-up: %d", p.Status)
		}
		for _, c := range b.Cookies() {
			keep(c.Value)
		}
		other := from(t, s, ip)
		login := other.Get(s.URL+"/login").Form(t, "/login")
		keep(login.Fields.Get("csrf_token"), "wrong guess 9f8e7d", "typed-the-password-here-77")
		other.Submit(login, map[string]string{"login": "logged", "password": "wrong guess 9f8e7d"})
		other.Submit(other.Get(s.URL+"/login").Form(t, "/login"), map[string]string{"login": "typed-the-password-here-77", "password": "x"})
		if p := signIn(t, other, s, "logged", password); p.Status != 200 {
			t.Fatalf("sign-in: %d", p.Status)
		}
		for _, c := range other.Cookies() {
			keep(c.Value)
		}

		// OAuth: consent, exchange, code reuse, refresh, refresh reuse, revoked token use.
		client, clientSecret := s.Client(t, oauth.ClientSpec{Name: "Logged App", RedirectURIs: []string{"http://127.0.0.1:9/callback"}})
		keep(clientSecret)
		verifier, challenge := pkce()
		keep(verifier)
		p := b.Authorize(authURL(s, client, "read write profile", "st", challenge), "logged", "allow")
		code := p.Location.Query().Get("code")
		keep(code)
		exchange := func() resp {
			return postForm(t, s, "/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {client.ID},
				"client_secret": {clientSecret}, "code": {code}, "redirect_uri": {client.RedirectURIs[0]}, "code_verifier": {verifier}})
		}
		set := exchange().JSON(t)
		at, rt := str(set, "access_token"), str(set, "refresh_token")
		keep(at, rt)
		u, err := s.App.Users.Get(t.Context(), str(api(t, s, "GET", "/v1/users/me", at, "").JSON(t), "id"))
		if err != nil {
			t.Fatal(err)
		}
		refresh := func(token string) map[string]any {
			return postForm(t, s, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {client.ID},
				"client_secret": {clientSecret}, "refresh_token": {token}}).JSON(t)
		}
		set2 := refresh(rt)
		keep(str(set2, "access_token"), str(set2, "refresh_token"))
		refresh(rt) // reuse: the family is revoked
		api(t, s, "GET", "/v1/users/me", str(set2, "access_token"), "")
		// A second authorization, whose code is then used twice.
		p = b.Authorize(authURL(s, client, "read", "st2", challenge), "logged", "allow")
		code = p.Location.Query().Get("code")
		keep(code)
		exchange()
		exchange()

		// API keys: one made through the API, revoked, then used.
		k := key(t, s, u, "read", "write", "profile")
		keep(k)
		made := api(t, s, "POST", "/v1/api-keys", k, `{"name":"short-lived"}`).JSON(t)
		keep(str(made, "key"))
		api(t, s, "DELETE", "/v1/api-keys/"+str(made, "id"), k, "")
		api(t, s, "GET", "/v1/users/me", str(made, "key"), "")
		// The user withdraws the app's access.
		if r := api(t, s, "DELETE", "/v1/users/me/authorizations/"+client.ID, k, ""); r.Status != 204 {
			t.Fatalf("revoke access: %d %s", r.Status, r.Body)
		}

		// A form posted from another origin: refused, with a hint for the operator.
		b.Origin = "http://127.0.0.1:1"
		if p := b.Submit(b.Get(s.URL+"/login").Form(t, "/login"), map[string]string{"login": "logged", "password": password}); p.Status != 403 {
			t.Fatalf("foreign origin: %d", p.Status)
		}

		for _, ev := range []string{"login_succeeded", "login_failed", "oauth_consent_granted", "oauth_code_reused",
			"oauth_refresh_token_reused", "revoked_credential_used", "oauth_consent_revoked", "form_refused"} {
			got := log.events(t, ev)
			if len(got) == 0 {
				t.Errorf("no %s event in the log", ev)
				continue
			}
			// The browser comes through the proxy from ip; the API and token
			// calls here come straight from the loopback address.
			want := "127.0.0.1"
			if strings.HasPrefix(ev, "login_") || ev == "oauth_consent_granted" || ev == "form_refused" {
				want = ip
			}
			for _, e := range got {
				if e["client_ip"] != want || !strings.HasPrefix(str(e, "request_id"), "req_") {
					t.Errorf("%s without its client IP or request id: %v", ev, e)
				}
			}
		}
		creds := map[string]bool{}
		for _, e := range log.events(t, "revoked_credential_used") {
			creds[str(e, "credential")] = true
		}
		if !creds["access_token"] || !creds["api_key"] {
			t.Errorf("revoked credentials logged: %v", creds)
		}
		if refused := log.events(t, "form_refused"); !strings.Contains(str(refused[len(refused)-1], "reason"), "MATCHPOINT_BASE_URL") {
			t.Errorf("an Origin that is not the base URL is logged without a hint: %v", refused)
		}

		all := log.String()
		if !strings.Contains(all, `"msg":"request"`) {
			t.Fatal("the log holds no request lines: the test reads the wrong log")
		}
		for _, sec := range secrets {
			if strings.Contains(all, sec) || strings.Contains(all, url.QueryEscape(sec)) {
				t.Errorf("the log holds the secret %q", sec)
			}
		}
	})
}
