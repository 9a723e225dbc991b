package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/oauth"
)

// FuzzFormStrings puts arbitrary text in the fields of the sign-in, sign-up
// and consent pages and of the OAuth endpoints, on each engine: whatever
// the bytes, the answer is never a 5xx. It is the proof that every string
// is checked at the edge before a database sees it.
func FuzzFormStrings(f *testing.F) {
	for _, seed := range []string{"ann", "ann\x00", "caf\xe9", "\xed\xa0\x80", "\xff\xfe", "a@b.c", "%00", strings.Repeat("é", 300), ""} {
		for target := 0; target < 5; target++ {
			f.Add(target, seed)
		}
	}
	type formServer struct {
		fuzzServer
		client *oauth.Client
		secret string
	}
	var servers []formServer
	for _, fs := range startFuzzServers(f) {
		c, secret := fs.s.Client(f, oauth.ClientSpec{RedirectURIs: []string{"http://127.0.0.1:9/callback"}})
		servers = append(servers, formServer{fuzzServer: fs, client: c, secret: secret})
	}
	f.Fuzz(func(t *testing.T, target int, text string) {
		for _, fs := range servers {
			s := fs.s
			br := s.NewBrowser(t)
			var status int
			switch uint(target) % 5 {
			case 0: // the login field (a look-up by username or email)
				status = br.Submit(br.Get(s.URL+"/login").Form(t, "/login"), map[string]string{"login": text, "password": "whatever it is"}).Status
			case 1: // sign-up fields (email and names are stored)
				status = br.Submit(br.Get(s.URL+"/signup").Form(t, "/signup"), map[string]string{"email": text + "@example.com",
					"username": "fz", "first_name": text, "password": "a password long enough"}).Status
			case 2: // a token request's code (looked up by hash) and client_id (looked up as is)
				status = postForm(t, s, "/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {fs.client.ID},
					"client_secret": {fs.secret}, "code": {text}, "redirect_uri": {"http://127.0.0.1:9/callback"}}).Status
			case 3:
				status = postForm(t, s, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {text}, "refresh_token": {text}}).Status
			case 4: // an authorization request's parameters
				q := url.Values{"client_id": {fs.client.ID}, "redirect_uri": {"http://127.0.0.1:9/callback"}, "response_type": {"code"},
					"scope": {"read " + text}, "state": {text}, "code_challenge": {text}}
				p := br.Get(s.URL + "/oauth/authorize?" + q.Encode())
				status = p.Status
				if p.Location != nil {
					status = http.StatusFound
				}
			}
			if status >= 500 {
				t.Fatalf("%s: target %d with %q: %d", fs.engine, target, text, status)
			}
		}
	})
}
