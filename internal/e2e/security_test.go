package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// logBuffer collects the service's log; the server writes it from many
// goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// lines returns the JSON log lines.
func (l *logBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %v\n%s", err, line)
		}
		out = append(out, m)
	}
	return out
}

// events returns the security events named name.
func (l *logBuffer) events(t *testing.T, name string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range l.lines(t) {
		if m["msg"] == "security event" && m["event"] == name {
			out = append(out, m)
		}
	}
	return out
}

// eachBehindProxy runs fn per engine on a server that trusts the loopback
// proxy, so tests choose client addresses with X-Forwarded-For, and logs to
// a buffer.
func eachBehindProxy(t *testing.T, fn func(t *testing.T, s *apptest.Server, log *logBuffer)) {
	for _, d := range testdb.Engines() {
		t.Run(string(d), func(t *testing.T) {
			log := &logBuffer{}
			fn(t, apptest.StartWith(t, d, apptest.Options{TrustedProxies: "127.0.0.1, ::1", Log: log}), log)
		})
	}
}

// from returns a browser whose requests come from ip, through the proxy.
func from(t *testing.T, s *apptest.Server, ip string) *apptest.Browser {
	b := s.NewBrowser(t)
	b.Header = http.Header{"X-Forwarded-For": {ip}}
	return b
}

func signIn(t *testing.T, b *apptest.Browser, s *apptest.Server, login, password string) *apptest.Page {
	t.Helper()
	return b.Submit(b.Get(s.URL+"/login").Form(t, "/login"), map[string]string{"login": login, "password": password})
}

// consentPage signs in if asked and returns the consent page, unanswered.
func consentPage(t *testing.T, b *apptest.Browser, s *apptest.Server, authURL, username string) *apptest.Page {
	t.Helper()
	p := b.Get(authURL)
	if p.Location == nil && strings.Contains(p.Body, `action="/login"`) {
		p = b.Submit(p.Form(t, "/login"), map[string]string{"login": username, "password": apptest.Password})
	}
	p.Form(t, "/oauth/authorize")
	return p
}

func TestConsentAndFirstParty(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		dev := s.User(t, "developer")

		t.Run("public clients always get the consent page", func(t *testing.T) {
			f := newFlow(t, s, "phoneuser", oauth.ClientSpec{Name: "Phone App", Public: true, OwnerID: dev.ID})
			v, _ := pkce()
			f.code("read", v) // allowed once
			_, ch := pkce()
			p := f.br.Get(authURL(s, f.client, "read", "again", ch))
			if p.Location != nil {
				t.Fatalf("a public client got a code without the user: %v", p.Location)
			}
			p.Form(t, "/oauth/authorize")
			if !strings.Contains(p.Body, "You allowed Phone App this access before.") || !strings.Contains(p.Body, `value="allow" autofocus`) {
				t.Errorf("the remembered choice is not pre-selected:\n%s", p.Body)
			}
		})

		t.Run("third-party apps cannot delete the account or change the username", func(t *testing.T) {
			f := newFlow(t, s, "victim", oauth.ClientSpec{Name: "Third Party", OwnerID: dev.ID})
			_, ch := pkce()
			consent := consentPage(t, f.br, s, authURL(s, f.client, "read write profile", "c", ch), f.user.Username)
			for _, want := range []string{"It can never delete your account, change your username or email", "(not your username)"} {
				if !strings.Contains(consent.Body, want) {
					t.Errorf("consent page lacks %q", want)
				}
			}
			_, list, _ := strings.Cut(consent.Body, `<ul class="scopes">`)
			list, _, _ = strings.Cut(list, "</ul>")
			if strings.Contains(list, "delete") || strings.Contains(list, "API keys") || strings.Contains(list, "and username") {
				t.Errorf("the consent page offers a third-party app what it may not do:\n%s", list)
			}
			at := str(f.tokens("read write profile"), "access_token")
			wantProblem(t, s, api(t, s, "DELETE", "/v1/users/me", at, ""), 403, "forbidden", "")
			wantProblem(t, s, api(t, s, "PATCH", "/v1/users/me", at, `{"username":"stolen"}`), 403, "forbidden", "username")
			if r := api(t, s, "PATCH", "/v1/users/me", at, `{"first_name":"Still"}`); r.Status != 200 {
				t.Fatalf("profile change: %d %s", r.Status, r.Body)
			}
			if me := api(t, s, "GET", "/v1/users/me", at, ""); me.Status != 200 || str(me.JSON(t), "username") != "victim" {
				t.Fatalf("the account changed: %s", me.Body)
			}
		})

		t.Run("first-party clients and API keys may", func(t *testing.T) {
			f := newFlow(t, s, "owner", oauth.ClientSpec{Name: "Matchpoint"})
			_, ch := pkce()
			consent := consentPage(t, f.br, s, authURL(s, f.client, "profile", "c", ch), f.user.Username)
			if !strings.Contains(consent.Body, "and delete your account") || strings.Contains(consent.Body, "It can never") {
				t.Errorf("first-party consent wording:\n%s", consent.Body)
			}
			at := str(f.tokens("read write profile"), "access_token")
			if r := api(t, s, "PATCH", "/v1/users/me", at, `{"username":"owner2"}`); r.Status != 200 {
				t.Fatalf("first-party rename: %d %s", r.Status, r.Body)
			}
			if r := api(t, s, "DELETE", "/v1/users/me", key(t, s, f.user, "profile"), ""); r.Status != 204 {
				t.Fatalf("delete with an API key: %d %s", r.Status, r.Body)
			}
		})
	})
}

func TestSignInThrottling(t *testing.T) {
	eachBehindProxy(t, func(t *testing.T, s *apptest.Server, log *logBuffer) {
		s.User(t, "target")
		attacker, owner := from(t, s, "203.0.113.66"), from(t, s, "198.51.100.7")
		for i := 0; i < users.MaxLoginFailures; i++ {
			if p := signIn(t, attacker, s, "target", "guess number "+strconv.Itoa(i)); p.Status != 401 {
				t.Fatalf("failure %d: %d", i, p.Status)
			}
		}
		p := signIn(t, attacker, s, "target@example.com", apptest.Password)
		if p.Status != 429 || !strings.Contains(p.Body, "Too many failed sign-ins") {
			t.Fatalf("locked: %d", p.Status)
		}
		if ra, err := strconv.Atoi(p.Header.Get("Retry-After")); err != nil || ra < 800 || ra > 900 {
			t.Fatalf("Retry-After = %q", p.Header.Get("Retry-After"))
		}
		if p := signIn(t, owner, s, "target", apptest.Password); p.Status != 200 {
			t.Fatalf("the owner, elsewhere, is locked out too: %d", p.Status)
		}
		// X-Forwarded-For is believed only from the trusted proxy, read from
		// the right: a spoofed left part does not get the attacker a fresh count.
		spoofer := from(t, s, "10.1.2.3, 203.0.113.66")
		if p := signIn(t, spoofer, s, "target", apptest.Password); p.Status != 429 {
			t.Fatalf("spoofed X-Forwarded-For: %d", p.Status)
		}

		locked := log.events(t, "login_locked")
		failed := log.events(t, "login_failed")
		if len(locked) == 0 || len(failed) != users.MaxLoginFailures || len(log.events(t, "login_throttled")) != 2 {
			t.Fatalf("events: %d locked, %d failed", len(locked), len(failed))
		}
		if failed[0]["client_ip"] != "203.0.113.66" || !strings.HasPrefix(str(failed[0], "request_id"), "req_") || str(failed[0], "user_id") == "" {
			t.Errorf("a failure is logged without its origin: %v", failed[0])
		}

		t.Run("sign-ups are throttled per address", func(t *testing.T) {
			b := from(t, s, "192.0.2.44")
			for i := 0; i < 10; i++ {
				form := b.Get(s.URL+"/signup").Form(t, "/signup")
				p := b.Submit(form, map[string]string{"email": "target@example.com", "username": "dup" + strconv.Itoa(i), "password": apptest.Password})
				if p.Status != 409 {
					t.Fatalf("sign-up %d: %d", i, p.Status)
				}
			}
			form := b.Get(s.URL+"/signup").Form(t, "/signup")
			p := b.Submit(form, map[string]string{"email": "new@example.com", "username": "newbie", "password": apptest.Password})
			if p.Status != 429 || p.Header.Get("Retry-After") == "" {
				t.Fatalf("throttled sign-up: %d %q", p.Status, p.Header.Get("Retry-After"))
			}
		})
	})
}

func TestStringsAtTheEdge(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		u := s.User(t, "texter")
		k := key(t, s, u, "read", "write", "profile")

		t.Run("JSON bodies, queries and paths", func(t *testing.T) {
			for _, c := range []struct{ method, path, body, param string }{
				{"POST", "/v1/api-keys", `{"name":"a\u0000b"}`, "name"},
				{"POST", "/v1/api-keys", `{"name":"ok","scopes":["read","\u0000"]}`, "scopes[1]"},
				{"PATCH", "/v1/users/me", "{\"bio\":\"caf\xe9\"}", "bio"},
				{"PATCH", "/v1/users/me", `{"skill_levels":{"tennis\u0000":"expert"}}`, `skill_levels.tennis\u0000`},
				{"POST", "/v1/users/me/verification", `{"document_type":"passport","note":"\u0000"}`, "note"},
				{"GET", "/v1/api-keys?cursor=%FF", "", "cursor"},
				{"GET", "/v1/verifications?status=%00", "", "status"},
			} {
				wantProblem(t, s, api(t, s, c.method, c.path, k, c.body), 400, "invalid_string", c.param)
			}
			if r := api(t, s, "GET", "/v1/users/me", k, ""); r.Status != 200 || strings.Contains(string(r.Body), "\\u0000") {
				t.Fatalf("something was stored: %s", r.Body)
			}
		})

		t.Run("sign-in and sign-up forms", func(t *testing.T) {
			b := s.NewBrowser(t)
			p := b.Submit(b.Get(s.URL+"/login").Form(t, "/login"), map[string]string{"login": "texter\x00", "password": apptest.Password})
			if p.Status != 400 || !strings.Contains(p.Body, "login must be valid UTF-8 text without NUL characters") {
				t.Fatalf("NUL login: %d", p.Status)
			}
			p = b.Submit(b.Get(s.URL+"/signup").Form(t, "/signup"), map[string]string{"email": "x@example.com", "username": "xavier",
				"password": apptest.Password, "first_name": "X\xff"})
			if p.Status != 400 || !strings.Contains(p.Body, "first_name must be valid UTF-8") {
				t.Fatalf("invalid UTF-8 name: %d", p.Status)
			}
		})

		t.Run("OAuth endpoints", func(t *testing.T) {
			f := newFlow(t, s, "oauthtexter", oauth.ClientSpec{})
			r := postForm(t, s, "/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {f.client.ID},
				"client_secret": {f.secret}, "code": {"mpc_\x00"}, "redirect_uri": {f.client.RedirectURIs[0]}})
			wantOAuthError(t, s, r, 400, "invalid_request", "the code parameter must be valid UTF-8 without NUL characters")
			_, ch := pkce()
			p := f.br.Get(authURL(s, f.client, "read", "st\xff", ch))
			if p.Location == nil || p.Location.Query().Get("error") != "invalid_request" || p.Location.Query().Has("state") {
				t.Fatalf("invalid state: %d %v", p.Status, p.Location)
			}
		})
	})
}

func TestPasswordsAndEmails(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		b := s.NewBrowser(t)
		submit := func(set map[string]string) *apptest.Page {
			return b.Submit(b.Get(s.URL+"/signup").Form(t, "/signup"), set)
		}
		p := submit(map[string]string{"email": "pw@example.com", "username": "pwuser", "password": strings.Repeat("long ", 20000)})
		if p.Status != 422 || !strings.Contains(p.Body, "password must be 12 to 256 characters") {
			t.Fatalf("over-long password: %d\n%s", p.Status, p.Body)
		}
		p = submit(map[string]string{"email": "pw@example.com", "username": "pwuser", "password": "qwerty123456"})
		if p.Status != 422 || !strings.Contains(p.Body, "most common") {
			t.Fatalf("common password: %d", p.Status)
		}
		p = submit(map[string]string{"email": "pw\u200b@example.com", "username": "pwuser", "password": apptest.Password})
		if p.Status != 422 || !strings.Contains(p.Body, "invisible") {
			t.Fatalf("zero-width space in the email: %d", p.Status)
		}
		// On the sign-in page, an over-long password is a wrong one, said plainly.
		p = b.Submit(b.Get(s.URL+"/login").Form(t, "/login"), map[string]string{"login": "pwuser", "password": strings.Repeat("x", 70000)})
		if p.Status != 422 || !strings.Contains(p.Body, "password must be 12 to 256 characters") {
			t.Fatalf("over-long password at sign-in: %d", p.Status)
		}
	})
}

func TestCSRFBoundToSession(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		f := newFlow(t, s, "csrfuser", oauth.ClientSpec{})
		_, ch := pkce()
		consent := consentPage(t, f.br, s, authURL(s, f.client, "read", "one", ch), f.user.Username).Form(t, "/oauth/authorize")

		// Another signed-in browser cannot use this browser's token.
		other := s.NewBrowser(t)
		signIn(t, other, s, f.user.Username, apptest.Password)
		if p := other.Submit(consent, map[string]string{"decision": "allow"}); p.Status != 403 {
			t.Fatalf("a token of another session: %d", p.Status)
		}
		// Signing in again rotates the token: the old consent form is stale.
		signIn(t, f.br, s, f.user.Username, apptest.Password)
		if p := f.br.Submit(consent, map[string]string{"decision": "allow"}); p.Status != 403 {
			t.Fatalf("a token from before sign-in: %d", p.Status)
		}
		fresh := f.br.Get(authURL(s, f.client, "read", "two", ch)).Form(t, "/oauth/authorize")
		if fresh.Fields.Get("csrf_token") == consent.Fields.Get("csrf_token") {
			t.Fatal("the token did not change at sign-in")
		}
		if p := f.br.Submit(fresh, map[string]string{"decision": "allow"}); p.Location == nil || p.Location.Query().Get("code") == "" {
			t.Fatalf("fresh form: %d", p.Status)
		}
		for _, c := range f.br.Cookies() {
			if strings.HasPrefix(c.Name, "__Host-") {
				t.Errorf("cookie %s has the __Host- prefix over plain http", c.Name)
			}
		}
	})
}

func TestNoStoreAndNotFound(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		ann, bob := s.User(t, "ann"), s.User(t, "bob")
		ak, bk := key(t, s, ann, "read", "write", "profile"), key(t, s, bob, "read", "write")
		for _, r := range []resp{
			api(t, s, "GET", "/v1/users/me", ak, ""),
			api(t, s, "GET", "/v1/users/"+bob.ID, ak, ""),
			api(t, s, "POST", "/v1/api-keys", ak, `{"name":"new"}`),
			api(t, s, "GET", "/v1/api-keys", ak, ""),
			api(t, s, "GET", "/v1/users/me/authorizations", ak, ""),
		} {
			if r.Status >= 300 || r.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("%d with Cache-Control %q: %s", r.Status, r.Header.Get("Cache-Control"), r.Body)
			}
		}
		if r := api(t, s, "PATCH", "/v1/users/me", ak, `{"privacy":{"profile_visibility":"private"}}`); r.Status != 200 {
			t.Fatal(r.Status)
		}
		missing := "usr_" + strings.Repeat("0", 26)
		private := wantProblem(t, s, api(t, s, "GET", "/v1/users/"+ann.ID, bk, ""), 404, "not_found", "")
		absent := wantProblem(t, s, api(t, s, "GET", "/v1/users/"+missing, bk, ""), 404, "not_found", "")
		if strings.ReplaceAll(str(private, "detail"), ann.ID, "ID") != strings.ReplaceAll(str(absent, "detail"), missing, "ID") {
			t.Fatalf("a private and a missing user differ: %q / %q", private["detail"], absent["detail"])
		}
	})
}

func TestDiscovery(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		r := api(t, s, "GET", "/.well-known/oauth-authorization-server", "", "")
		var md struct {
			Issuer                string   `json:"issuer"`
			AuthorizationEndpoint string   `json:"authorization_endpoint"`
			TokenEndpoint         string   `json:"token_endpoint"`
			RevocationEndpoint    string   `json:"revocation_endpoint"`
			IntrospectionEndpoint string   `json:"introspection_endpoint"`
			CodeChallengeMethods  []string `json:"code_challenge_methods_supported"`
			ResponseTypes         []string `json:"response_types_supported"`
			IssParameter          bool     `json:"authorization_response_iss_parameter_supported"`
		}
		if err := json.Unmarshal(r.Body, &md); err != nil || r.Status != 200 {
			t.Fatalf("metadata: %d %v %s", r.Status, err, r.Body)
		}
		if md.Issuer != s.URL || md.AuthorizationEndpoint != s.URL+"/oauth/authorize" || md.TokenEndpoint != s.URL+"/oauth/token" ||
			md.RevocationEndpoint != s.URL+"/oauth/revoke" || md.IntrospectionEndpoint != s.URL+"/oauth/introspect" ||
			strings.Join(md.CodeChallengeMethods, ",") != "S256" || strings.Join(md.ResponseTypes, ",") != "code" || !md.IssParameter {
			t.Fatalf("metadata = %+v", md)
		}
		f := newFlow(t, s, "issuser", oauth.ClientSpec{})
		_, ch := pkce()
		p := f.br.Authorize(authURL(s, f.client, "read", "st", ch), f.user.Username, "allow")
		if p.Location == nil || p.Location.Query().Get("iss") != md.Issuer {
			t.Fatalf("success redirect without iss: %v", p.Location)
		}
		p = f.br.Get(authURL(s, f.client, "nonsense", "st", ch))
		if p.Location == nil || p.Location.Query().Get("error") != "invalid_scope" || p.Location.Query().Get("iss") != md.Issuer {
			t.Fatalf("error redirect without iss: %v", p.Location)
		}
	})
}

func TestReviewerIsNotSubject(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		ctx := context.Background()
		op, err := s.App.Users.Register(ctx, users.Registration{Email: "op@example.com", Username: "opal", Password: apptest.Password, Role: "operator"})
		if err != nil {
			t.Fatal(err)
		}
		if op, err = s.App.Users.SetTier(ctx, op.ID, users.TierEnterprise, nil); err != nil {
			t.Fatal(err)
		}
		ok := key(t, s, op, "read", "write", "admin")
		r := api(t, s, "POST", "/v1/users/me/verification", ok, `{"document_type":"passport"}`)
		if r.Status != 201 {
			t.Fatalf("request: %d %s", r.Status, r.Body)
		}
		id := str(r.JSON(t), "id")
		wantProblem(t, s, api(t, s, "POST", "/v1/verifications/"+id+"/approve", ok, ""), 403, "forbidden", "")
		if me := api(t, s, "GET", "/v1/users/me", ok, "").JSON(t); me["verified"] != false {
			t.Fatal("an operator verified themselves")
		}
	})
}
