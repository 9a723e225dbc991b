package e2e

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/httpapi"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// TestMyVerification covers reading one's own ID verification request.
func TestMyVerification(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		u := s.User(t, "verifyme")
		k := s.Key(t, u, "read", "write")
		t.Run("none yet", func(t *testing.T) {
			wantProblem(t, s, api(t, s, "GET", "/v1/users/me/verification", k, ""), 404, "not_found", "")
		})
		sent := decode[httpapi.Verification](t, api(t, s, "POST", "/v1/users/me/verification", k, `{"document_type":"national_id"}`), 201)
		t.Run("the pending request", func(t *testing.T) {
			got := decode[httpapi.Verification](t, api(t, s, "GET", "/v1/users/me/verification", k, ""), 200)
			if got.ID != sent.ID || got.Status != users.VerificationPending || got.DocumentType != "national_id" {
				t.Fatalf("got %+v", got)
			}
		})
		t.Run("after review", func(t *testing.T) {
			op := s.User(t, "reviewer")
			if _, err := s.App.Users.ReviewVerification(context.Background(), op.ID, sent.ID, false, "blurred"); err != nil {
				t.Fatal(err)
			}
			got := decode[httpapi.Verification](t, api(t, s, "GET", "/v1/users/me/verification", k, ""), 200)
			if got.Status != users.VerificationRejected {
				t.Fatalf("got %+v", got)
			}
		})
	})
}

// TestRevokeAccessToken: an access token revoked at /oauth/revoke stops
// working at once; its grant's other tokens keep working.
func TestRevokeAccessToken(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		u := s.User(t, "revoker")
		c, secret := s.Client(t, oauth.ClientSpec{RedirectURIs: []string{"https://app.example/cb"}})
		ts := s.Token(t, u, c, secret, "read")
		if r := api(t, s, "GET", "/v1/users/me", ts.AccessToken, ""); r.Status != 200 {
			t.Fatalf("before: %d", r.Status)
		}
		r := postForm(t, s, "/oauth/revoke", url.Values{"token": {ts.AccessToken}, "client_id": {c.ID}, "client_secret": {secret}})
		if r.Status != 200 {
			t.Fatalf("revoke: %d %s", r.Status, r.Body)
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/users/me", ts.AccessToken, ""), 401, "invalid_token", "")
		r = postForm(t, s, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {ts.RefreshToken},
			"client_id": {c.ID}, "client_secret": {secret}})
		fresh := decode[oauth.TokenSet](t, r, 200)
		if api(t, s, "GET", "/v1/users/me", fresh.AccessToken, "").Status != 200 {
			t.Fatal("the grant's refreshed token does not work")
		}
	})
}

// TestSetRole: an operator (role set by the service) with the admin scope
// reviews verifications; the same account as a member may not.
func TestSetRole(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		ctx := context.Background()
		u := s.User(t, "soonop")
		if _, err := s.App.Users.SetTier(ctx, u.ID, users.TierEnterprise, nil); err != nil {
			t.Fatal(err)
		}
		k := s.Key(t, u, "read", "admin")
		wantProblem(t, s, api(t, s, "GET", "/v1/verifications", k, ""), 403, "forbidden", "")
		if got, err := s.App.Users.SetRole(ctx, u.ID, "operator"); err != nil || got.Role != "operator" {
			t.Fatalf("SetRole: %v %v", got, err)
		}
		if r := api(t, s, "GET", "/v1/verifications", k, ""); r.Status != 200 {
			t.Fatalf("as operator: %d %s", r.Status, r.Body)
		}
		for _, bad := range []string{"system", "root", ""} {
			if _, err := s.App.Users.SetRole(ctx, u.ID, bad); err == nil {
				t.Errorf("SetRole(%q) accepted", bad)
			}
		}
	})
}

// TestLogout: signing out ends the session; the next authorization asks
// the person to sign in again.
func TestLogout(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		s.User(t, "leaver")
		c, _ := s.Client(t, oauth.ClientSpec{RedirectURIs: []string{"https://app.example/cb"}})
		br := s.NewBrowser(t)
		u := authURL(s, c, "read", "st", "")
		p := br.Get(u)
		consent := br.Submit(p.Form(t, "/login"), map[string]string{"login": "leaver", "password": apptest.Password})
		logout := consent.Form(t, "/logout")
		p = br.Submit(logout, nil)
		if p.Status != http.StatusOK || len(p.Forms()) == 0 || p.Forms()[0].Action != "/login" {
			t.Fatalf("after logout: %d %s", p.Status, p.Body)
		}
		if p := br.Get(u); !hasLoginForm(p) {
			t.Fatalf("the authorization did not ask to sign in again: %d %s", p.Status, p.Body)
		}
	})
}

func hasLoginForm(p *apptest.Page) bool {
	for _, f := range p.Forms() {
		if f.Action == "/login" {
			return true
		}
	}
	return false
}
