package e2e

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
)

// TestOAuthErrors covers the failure cases of the authorization server, each
// with its exact status and body.
func TestOAuthErrors(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		n := 0
		next := func(t *testing.T, spec oauth.ClientSpec) *flow {
			n++
			return newFlow(t, s, "user"+string(rune('a'+n)), spec)
		}

		t.Run("code reuse revokes tokens issued from it", func(t *testing.T) {
			f := next(t, oauth.ClientSpec{})
			v, _ := pkce()
			code := f.code("read", v)
			first := f.exchange(code, v)
			if first.Status != 200 {
				t.Fatalf("first exchange: %d %s", first.Status, first.Body)
			}
			at := str(first.JSON(t), "access_token")
			if r := api(t, s, "GET", "/v1/users/me", at, ""); r.Status != 200 {
				t.Fatalf("token works before reuse: %d", r.Status)
			}
			wantOAuthError(t, s, f.exchange(code, v), 400, "invalid_grant", "the authorization code was already used; tokens issued from it are revoked")
			wantProblem(t, s, api(t, s, "GET", "/v1/users/me", at, ""), 401, "invalid_token", "")
			wantOAuthError(t, s, f.refresh(str(first.JSON(t), "refresh_token"), nil), 400, "invalid_grant", "the refresh token has been revoked")
		})

		t.Run("concurrent double exchange has one winner", func(t *testing.T) {
			f := next(t, oauth.ClientSpec{})
			v, _ := pkce()
			code := f.code("read", v)
			const racers = 4
			results := make([]resp, racers)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range results {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					results[i] = f.exchange(code, v)
				}()
			}
			close(start)
			wg.Wait()
			wins := 0
			for _, r := range results {
				switch r.Status {
				case 200:
					wins++
				default:
					wantOAuthError(t, s, r, 400, "invalid_grant", "the authorization code was already used; tokens issued from it are revoked")
				}
			}
			if wins != 1 {
				t.Fatalf("%d exchanges succeeded, want exactly 1", wins)
			}
		})

		t.Run("expired code", func(t *testing.T) {
			f := next(t, oauth.ClientSpec{})
			v, _ := pkce()
			code := f.code("read", v)
			s.Clock.Advance(oauth.CodeTTL + time.Second)
			wantOAuthError(t, s, f.exchange(code, v), 400, "invalid_grant", "the authorization code has expired")
		})

		t.Run("code from another client", func(t *testing.T) {
			f := next(t, oauth.ClientSpec{})
			other, otherSecret := s.Client(t, oauth.ClientSpec{RedirectURIs: f.client.RedirectURIs})
			v, _ := pkce()
			code := f.code("read", v)
			r := postForm(t, s, "/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {other.ID},
				"client_secret": {otherSecret}, "code": {code}, "redirect_uri": {f.client.RedirectURIs[0]}, "code_verifier": {v}})
			wantOAuthError(t, s, r, 400, "invalid_grant", "the authorization code was issued to another client")
			// The rightful client can still use it.
			if r := f.exchange(code, v); r.Status != 200 {
				t.Fatalf("rightful exchange after a foreign attempt: %d %s", r.Status, r.Body)
			}
		})

		t.Run("wrong client secret", func(t *testing.T) {
			f := next(t, oauth.ClientSpec{})
			v, _ := pkce()
			code := f.code("read", v)
			f.secret = "mps_" + strings.Repeat("A", 49)
			r := f.exchange(code, v)
			wantOAuthError(t, s, r, 401, "invalid_client", "client authentication failed")
			// With Basic authentication the 401 carries a Basic challenge.
			req, _ := http.NewRequest("POST", s.URL+"/oauth/token", strings.NewReader(url.Values{"grant_type": {"authorization_code"}, "code": {code},
				"redirect_uri": {f.client.RedirectURIs[0]}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(f.client.ID+":wrong")))
			r = do(t, req)
			wantOAuthError(t, s, r, 401, "invalid_client", "client authentication failed")
			if h := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(h, "Basic") {
				t.Errorf("WWW-Authenticate = %q", h)
			}
		})

		t.Run("Basic client authentication works", func(t *testing.T) {
			f := next(t, oauth.ClientSpec{})
			v, _ := pkce()
			code := f.code("read", v)
			req, _ := http.NewRequest("POST", s.URL+"/oauth/token", strings.NewReader(url.Values{"grant_type": {"authorization_code"}, "code": {code},
				"redirect_uri": {f.client.RedirectURIs[0]}, "code_verifier": {v}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.SetBasicAuth(url.QueryEscape(f.client.ID), url.QueryEscape(f.secret))
			if r := do(t, req); r.Status != 200 {
				t.Fatalf("Basic auth exchange: %d %s", r.Status, r.Body)
			}
		})

		t.Run("redirect_uri mismatch at the token endpoint", func(t *testing.T) {
			f := next(t, oauth.ClientSpec{RedirectURIs: []string{"http://127.0.0.1:9/callback", "http://127.0.0.1:9/other"}})
			v, _ := pkce()
			code := f.code("read", v)
			f.client.RedirectURIs[0] = "http://127.0.0.1:9/other"
			wantOAuthError(t, s, f.exchange(code, v), 400, "invalid_grant", "redirect_uri does not match the one of the authorization request")
		})

		t.Run("unregistered or tampered redirect_uri is never redirected to", func(t *testing.T) {
			f := next(t, oauth.ClientSpec{})
			for _, bad := range []string{"https://evil.example/callback", "http://127.0.0.1:9/callback/", "http://127.0.0.1:9/callback?x=1", "http://127.0.0.1:9/CALLBACK", ""} {
				q := url.Values{"client_id": {f.client.ID}, "redirect_uri": {bad}, "response_type": {"code"}, "scope": {"read"}, "state": {"s"}}
				p := f.br.Get(s.URL + "/oauth/authorize?" + q.Encode())
				if p.Status != 400 || p.Location != nil || p.Header.Get("Location") != "" {
					t.Fatalf("redirect_uri %q: status %d, location %v", bad, p.Status, p.Location)
				}
				desc := "redirect_uri is not registered for this client"
				if bad == "" {
					desc = "redirect_uri is required"
				}
				if !strings.Contains(p.Body, desc) {
					t.Errorf("error page for %q lacks %q", bad, desc)
				}
				// A client asking for JSON gets the document's error body.
				req, _ := http.NewRequest("GET", s.URL+"/oauth/authorize?"+q.Encode(), nil)
				req.Header.Set("Accept", "application/json")
				wantOAuthError(t, s, do(t, req), 400, "invalid_request", desc)
			}
			q := url.Values{"client_id": {"app_0000000000000000000000000a"}, "redirect_uri": {"https://evil.example/cb"}, "response_type": {"code"}, "scope": {"read"}}
			req, _ := http.NewRequest("GET", s.URL+"/oauth/authorize?"+q.Encode(), nil)
			req.Header.Set("Accept", "application/json")
			wantOAuthError(t, s, do(t, req), 400, "invalid_client", "unknown client_id")
		})

		wantRedirectError := func(t *testing.T, p *apptest.Page, code, description, state string) {
			t.Helper()
			if p.Location == nil {
				t.Fatalf("no redirect: %d %s", p.Status, p.Body)
			}
			q := p.Location.Query()
			want := url.Values{"error": {code}, "error_description": {description}, "error_uri": {s.URL + "/docs/errors#" + code}, "state": {state},
				"iss": {s.URL}}
			if q.Encode() != want.Encode() {
				t.Fatalf("redirect query = %v, want %v", q, want)
			}
			if base := p.Location.Scheme + "://" + p.Location.Host + p.Location.Path; base != "http://127.0.0.1:9/callback" {
				t.Fatalf("redirected to %s", base)
			}
		}

		t.Run("bad scope redirects with invalid_scope and the state", func(t *testing.T) {
			f := next(t, oauth.ClientSpec{})
			_, ch := pkce()
			wantRedirectError(t, f.br.Get(authURL(s, f.client, "read nonsense", "st-1", ch)), "invalid_scope", `unknown scope "nonsense"`, "st-1")
			wantRedirectError(t, f.br.Get(authURL(s, f.client, "read admin", "st-2", ch)), "invalid_scope", `this client may not request the "admin" scope`, "st-2")
			// A client of a free-tier account cannot get admin at all.
			owner := s.User(t, "freeowner")
			free := next(t, oauth.ClientSpec{OwnerID: owner.ID})
			wantRedirectError(t, free.br.Get(authURL(s, free.client, "read admin", "st-4", ch)), "invalid_scope", "the admin scope is available only to Enterprise clients", "st-4")
			narrow := next(t, oauth.ClientSpec{Scopes: []string{"read"}})
			wantRedirectError(t, narrow.br.Get(authURL(s, narrow.client, "read events", "st-3", ch)), "invalid_scope", `this client may not request the "events" scope`, "st-3")
		})

		t.Run("denied consent", func(t *testing.T) {
			f := next(t, oauth.ClientSpec{})
			_, ch := pkce()
			wantRedirectError(t, f.br.Authorize(authURL(s, f.client, "read", "deny-me", ch), f.user.Username, "deny"), "access_denied", "the user denied the request", "deny-me")
		})

		t.Run("state with special characters comes back unchanged", func(t *testing.T) {
			f := next(t, oauth.ClientSpec{})
			_, ch := pkce()
			state := `a b+c&d=e/f?g#h%20 é"<x>` + "'"
			p := f.br.Authorize(authURL(s, f.client, "read", state, ch), f.user.Username, "allow")
			if p.Location == nil || p.Location.Query().Get("state") != state || p.Location.Query().Get("code") == "" {
				t.Fatalf("state came back as %q (%v)", p.Location.Query().Get("state"), p.Location)
			}
		})

		t.Run("refresh with a broader scope fails and keeps the token", func(t *testing.T) {
			f := next(t, oauth.ClientSpec{})
			set := f.tokens("read write")
			wider := "read write events"
			wantOAuthError(t, s, f.refresh(str(set, "refresh_token"), &wider), 400, "invalid_scope", "the requested scope is broader than the original grant (read write)")
			if r := f.refresh(str(set, "refresh_token"), nil); r.Status != 200 {
				t.Fatalf("refresh after a refused one: %d %s", r.Status, r.Body)
			}
		})

		t.Run("refresh with a narrower scope, then a missing scope", func(t *testing.T) {
			f := next(t, oauth.ClientSpec{})
			set := f.tokens("read write")
			narrow := "write"
			r := f.refresh(str(set, "refresh_token"), &narrow)
			if r.Status != 200 || str(r.JSON(t), "scope") != "write" {
				t.Fatalf("narrow refresh: %d %s", r.Status, r.Body)
			}
			// GET /v1/users/me needs read or profile.
			got := api(t, s, "GET", "/v1/users/me", str(r.JSON(t), "access_token"), "")
			p := wantProblem(t, s, got, 403, "insufficient_scope", "")
			if p["detail"] != "This operation needs one of these scopes: read, profile." {
				t.Errorf("detail = %q", p["detail"])
			}
			if h := got.Header.Get("WWW-Authenticate"); h != `Bearer realm="matchpoint", error="insufficient_scope", scope="read profile"` {
				t.Errorf("WWW-Authenticate = %q", h)
			}
			// The grant keeps its original scope: the next refresh may ask for it again.
			full := "read write"
			if r := f.refresh(str(r.JSON(t), "refresh_token"), &full); r.Status != 200 || str(r.JSON(t), "scope") != "read write" {
				t.Fatalf("refresh back to the full grant: %d %s", r.Status, r.Body)
			}
		})

		t.Run("refresh token reuse revokes the family", func(t *testing.T) {
			f := next(t, oauth.ClientSpec{})
			set := f.tokens("read")
			rt1 := str(set, "refresh_token")
			r := f.refresh(rt1, nil)
			if r.Status != 200 {
				t.Fatalf("first refresh: %d %s", r.Status, r.Body)
			}
			rt2, at2 := str(r.JSON(t), "refresh_token"), str(r.JSON(t), "access_token")
			wantOAuthError(t, s, f.refresh(rt1, nil), 400, "invalid_grant", "the refresh token was already used; every token of this grant is revoked")
			wantOAuthError(t, s, f.refresh(rt2, nil), 400, "invalid_grant", "the refresh token has been revoked")
			wantProblem(t, s, api(t, s, "GET", "/v1/users/me", at2, ""), 401, "invalid_token", "")
			wantProblem(t, s, api(t, s, "GET", "/v1/users/me", str(set, "access_token"), ""), 401, "invalid_token", "")
		})

		t.Run("refresh from another client", func(t *testing.T) {
			f := next(t, oauth.ClientSpec{})
			set := f.tokens("read")
			other, otherSecret := s.Client(t, oauth.ClientSpec{RedirectURIs: f.client.RedirectURIs})
			r := postForm(t, s, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {other.ID},
				"client_secret": {otherSecret}, "refresh_token": {str(set, "refresh_token")}})
			wantOAuthError(t, s, r, 400, "invalid_grant", "the refresh token was issued to another client")
			if r := f.refresh(str(set, "refresh_token"), nil); r.Status != 200 {
				t.Fatalf("rightful refresh after a foreign attempt: %d %s", r.Status, r.Body)
			}
		})

		t.Run("unsupported and unauthorized grant types", func(t *testing.T) {
			f := next(t, oauth.ClientSpec{})
			r := postForm(t, s, "/oauth/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {f.client.ID}, "client_secret": {f.secret}})
			wantOAuthError(t, s, r, 400, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
			r = postForm(t, s, "/oauth/token", url.Values{"client_id": {f.client.ID}, "client_secret": {f.secret}})
			wantOAuthError(t, s, r, 400, "invalid_request", "grant_type is required")
			noRefresh := next(t, oauth.ClientSpec{GrantTypes: []string{"authorization_code"}})
			set := noRefresh.tokens("read")
			if _, ok := set["refresh_token"]; ok {
				t.Errorf("a client without the refresh_token grant got a refresh token")
			}
			r = postForm(t, s, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {noRefresh.client.ID},
				"client_secret": {noRefresh.secret}, "refresh_token": {"mpr_x"}})
			wantOAuthError(t, s, r, 400, "unauthorized_client", "this client is not registered for the refresh_token grant")
		})

		t.Run("non-form body", func(t *testing.T) {
			f := next(t, oauth.ClientSpec{})
			for _, ct := range []string{"application/json", "text/plain", ""} {
				req, _ := http.NewRequest("POST", s.URL+"/oauth/token", strings.NewReader(`{"grant_type":"authorization_code","client_id":"`+f.client.ID+`"}`))
				if ct != "" {
					req.Header.Set("Content-Type", ct)
				}
				wantOAuthError(t, s, do(t, req), 400, "invalid_request", "the body must be application/x-www-form-urlencoded")
			}
			r := postForm(t, s, "/oauth/token", url.Values{"grant_type": {"authorization_code", "refresh_token"}, "client_id": {f.client.ID}})
			wantOAuthError(t, s, r, 400, "invalid_request", "the grant_type parameter is repeated")
		})

		t.Run("PKCE", func(t *testing.T) {
			f := next(t, oauth.ClientSpec{})
			v, _ := pkce()
			code := f.code("read", v)
			other, _ := pkce()
			wantOAuthError(t, s, f.exchange(code, other), 400, "invalid_grant", "code_verifier does not match the code_challenge")
			wantOAuthError(t, s, f.exchange(code, ""), 400, "invalid_grant", "code_verifier is required: the authorization request used PKCE")
			if r := f.exchange(code, v); r.Status != 200 {
				t.Fatalf("right verifier after wrong ones: %d %s", r.Status, r.Body)
			}
			// A public client must use PKCE, and has no secret.
			pub := next(t, oauth.ClientSpec{Public: true})
			p := pub.br.Get(authURL(s, pub.client, "read", "pk", ""))
			wantRedirectError(t, p, "invalid_request", "public clients must use PKCE: send code_challenge and code_challenge_method=S256", "pk")
			q := url.Values{"client_id": {pub.client.ID}, "redirect_uri": {pub.client.RedirectURIs[0]}, "response_type": {"code"}, "scope": {"read"},
				"state": {"pk"}, "code_challenge": {"abc"}, "code_challenge_method": {"plain"}}
			wantRedirectError(t, pub.br.Get(s.URL+"/oauth/authorize?"+q.Encode()), "invalid_request", "code_challenge_method must be S256", "pk")
			v2, _ := pkce()
			code = pub.code("read", v2)
			r := postForm(t, s, "/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {pub.client.ID}, "code": {code},
				"redirect_uri": {pub.client.RedirectURIs[0]}, "code_verifier": {v2}})
			if r.Status != 200 {
				t.Fatalf("public client exchange: %d %s", r.Status, r.Body)
			}
		})

		t.Run("expired access token", func(t *testing.T) {
			f := next(t, oauth.ClientSpec{})
			at := str(f.tokens("read"), "access_token")
			s.Clock.Advance(3600 * time.Second)
			got := api(t, s, "GET", "/v1/users/me", at, "")
			p := wantProblem(t, s, got, 401, "invalid_token", "")
			if p["detail"] != "The access token expired." {
				t.Errorf("detail = %q", p["detail"])
			}
			if h := got.Header.Get("WWW-Authenticate"); h != `Bearer realm="matchpoint", error="invalid_token", error_description="The access token expired."` {
				t.Errorf("WWW-Authenticate = %q", h)
			}
		})

		t.Run("unsupported response type and unknown prompt", func(t *testing.T) {
			f := next(t, oauth.ClientSpec{})
			q := url.Values{"client_id": {f.client.ID}, "redirect_uri": {f.client.RedirectURIs[0]}, "response_type": {"token"}, "scope": {"read"}, "state": {"rt"}}
			wantRedirectError(t, f.br.Get(s.URL+"/oauth/authorize?"+q.Encode()), "unsupported_response_type", "response_type must be code", "rt")
		})

		t.Run("consent form refuses cross-site posts", func(t *testing.T) {
			f := next(t, oauth.ClientSpec{})
			_, ch := pkce()
			p := f.br.Get(authURL(s, f.client, "read", "x", ch))
			p = f.br.Submit(p.Form(t, "/login"), map[string]string{"login": f.user.Username, "password": apptest.Password})
			consent := p.Form(t, "/oauth/authorize")
			f.br.Origin = "https://evil.example"
			if p := f.br.Submit(consent, map[string]string{"decision": "allow"}); p.Status != 403 || p.Location != nil {
				t.Fatalf("foreign Origin: %d %v", p.Status, p.Location)
			}
			f.br.Origin = s.URL
			if p := f.br.Submit(consent, map[string]string{"decision": "allow", "csrf_token": "forged"}); p.Status != 403 || p.Location != nil {
				t.Fatalf("forged token: %d %v", p.Status, p.Location)
			}
			if p := f.br.Submit(consent, map[string]string{"decision": "allow"}); p.Location == nil {
				t.Fatalf("genuine post: %d", p.Status)
			}
		})
	})
}
