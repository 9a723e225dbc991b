package e2e

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// resp is a response read whole.
type resp struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r resp) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

func do(t testing.TB, req *http.Request) resp {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{Status: res.StatusCode, Header: res.Header, Body: b}
}

// postForm posts form to an OAuth endpoint with client_secret_post.
func postForm(t testing.TB, s *apptest.Server, path string, form url.Values) resp {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(t, req)
}

// api calls the REST API with a bearer token.
func api(t testing.TB, s *apptest.Server, method, path, token, body string) resp {
	t.Helper()
	return nodeAPI(t, s.URL, method, path, token, body)
}

// apiWithHeader calls the REST API with one more request header.
func apiWithHeader(t testing.TB, s *apptest.Server, method, path, token, body, name, value string) resp {
	t.Helper()
	return nodeAPI(t, s.URL, method, path, token, body, name, value)
}

// nodeAPI calls the REST API of the service at base (a node of a cluster),
// with extra headers as name, value pairs.
func nodeAPI(t testing.TB, base, method, path, token, body string, headers ...string) resp {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, base+path, r)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return do(t, req)
}

// wantOAuthError checks an OAuth error response: status, the three fields of
// the document's error body and nothing else, and no caching.
func wantOAuthError(t testing.TB, s *apptest.Server, r resp, status int, code, description string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d; body %s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q", ct)
	}
	if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store", cc)
	}
	want := map[string]any{"error": code, "error_description": description, "error_uri": s.URL + "/docs/errors#" + code}
	got := r.JSON(t)
	if len(got) != len(want) {
		t.Errorf("body = %v, want exactly %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

// wantProblem checks a /v1 problem response.
func wantProblem(t testing.TB, s *apptest.Server, r resp, status int, code, param string) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d; body %s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q, want application/problem+json", ct)
	}
	p := r.JSON(t)
	if p["code"] != code || p["status"] != float64(status) || p["type"] != s.URL+"/docs/errors#"+code {
		t.Errorf("problem = %v, want code %q status %d", p, code, status)
	}
	if got, _ := p["param"].(string); got != param {
		t.Errorf("param = %q, want %q", got, param)
	}
	if p["request_id"] == "" || p["request_id"] != r.Header.Get("Request-Id") {
		t.Errorf("request_id %v does not match header %q", p["request_id"], r.Header.Get("Request-Id"))
	}
	return p
}

// pkce returns a fresh verifier and its S256 challenge.
func pkce() (verifier, challenge string) {
	var b [32]byte
	_, _ = rand.Read(b[:])
	verifier = base64.RawURLEncoding.EncodeToString(b[:])
	return verifier, oauth.S256(verifier)
}

// authURL builds an authorization request.
func authURL(s *apptest.Server, c *oauth.Client, scope, state, challenge string) string {
	q := url.Values{"client_id": {c.ID}, "redirect_uri": {c.RedirectURIs[0]}, "response_type": {"code"}, "scope": {scope}, "state": {state}}
	if challenge != "" {
		q.Set("code_challenge", challenge)
		q.Set("code_challenge_method", "S256")
	}
	return s.URL + "/oauth/authorize?" + q.Encode()
}

// flow is one client and one user, with helpers to get codes and tokens.
type flow struct {
	t      *testing.T
	s      *apptest.Server
	client *oauth.Client
	secret string
	user   *users.User
	br     *apptest.Browser
}

func newFlow(t *testing.T, s *apptest.Server, username string, spec oauth.ClientSpec) *flow {
	if len(spec.RedirectURIs) == 0 {
		spec.RedirectURIs = []string{"http://127.0.0.1:9/callback"}
	}
	c, secret := s.Client(t, spec)
	return &flow{t: t, s: s, client: c, secret: secret, user: s.User(t, username), br: s.NewBrowser(t)}
}

// code runs the browser flow and returns an authorization code.
func (f *flow) code(scope, verifier string) string {
	f.t.Helper()
	challenge := ""
	if verifier != "" {
		challenge = oauth.S256(verifier)
	}
	p := f.br.Authorize(authURL(f.s, f.client, scope, "st", challenge), f.user.Username, "allow")
	if p.Location == nil || p.Location.Query().Get("code") == "" {
		f.t.Fatalf("no code: status %d location %v body %s", p.Status, p.Location, p.Body)
	}
	return p.Location.Query().Get("code")
}

func (f *flow) exchange(code, verifier string) resp {
	f.t.Helper()
	form := url.Values{"grant_type": {"authorization_code"}, "client_id": {f.client.ID}, "client_secret": {f.secret},
		"code": {code}, "redirect_uri": {f.client.RedirectURIs[0]}}
	if verifier != "" {
		form.Set("code_verifier", verifier)
	}
	return postForm(f.t, f.s, "/oauth/token", form)
}

func (f *flow) refresh(rt string, scope *string) resp {
	f.t.Helper()
	form := url.Values{"grant_type": {"refresh_token"}, "client_id": {f.client.ID}, "client_secret": {f.secret}, "refresh_token": {rt}}
	if scope != nil {
		form.Set("scope", *scope)
	}
	return postForm(f.t, f.s, "/oauth/token", form)
}

// tokens gets a token set for scope, failing the test on error.
func (f *flow) tokens(scope string) map[string]any {
	f.t.Helper()
	v, _ := pkce()
	r := f.exchange(f.code(scope, v), v)
	if r.Status != http.StatusOK {
		f.t.Fatalf("exchange: %d %s", r.Status, r.Body)
	}
	return r.JSON(f.t)
}

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

// keyOf makes an API key with scopes for the account userID.
func keyOf(t testing.TB, a *app.App, userID string, scopes ...string) string {
	t.Helper()
	_, k, err := a.Keys.Create(context.Background(), apikeys.Spec{UserID: userID, Name: "test", Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// keyFor makes a broad API key for u, for tests that are not about scopes.
func keyFor(t testing.TB, s *apptest.Server, u *users.User) string {
	t.Helper()
	_, k, err := s.App.Keys.Create(context.Background(), apikeys.Spec{UserID: u.ID, Name: "fuzz",
		Scopes: []string{"read", "write", "profile"}})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// decode reads a response body into the API's own type, failing on a
// status other than want.
func decode[T any](t testing.TB, r resp, want int) T {
	t.Helper()
	var v T
	if r.Status != want {
		t.Fatalf("status %d, want %d: %s", r.Status, want, r.Body)
	}
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("body does not decode into %T: %v\n%s", v, err, r.Body)
	}
	return v
}
