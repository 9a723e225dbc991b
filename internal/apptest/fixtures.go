package apptest

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// Fixtures every domain's tests start from: an API key, an OAuth access
// token from a client, a profile. Each domain adds its own in a file named
// after it (matching.go, events.go...).

// Key makes an API key for u with scopes (read when none).
func (s *Server) Key(t testing.TB, u *users.User, scopes ...string) string {
	t.Helper()
	_, k, err := s.App.Keys.Create(context.Background(), apikeys.Spec{UserID: u.ID, Name: "test", Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Token runs the authorization-code flow of client c for u without a
// browser (the consent is given directly) and returns the token set. c is
// made with Client; secret is its secret.
func (s *Server) Token(t testing.TB, u *users.User, c *oauth.Client, secret string, scopes ...string) *oauth.TokenSet {
	t.Helper()
	ctx := context.Background()
	req, err := s.App.OAuth.ParseAuthorize(ctx, url.Values{"client_id": {c.ID}, "redirect_uri": {c.RedirectURIs[0]},
		"response_type": {"code"}, "scope": {strings.Join(scopes, " ")}, "state": {"fixture"}})
	if err != nil {
		t.Fatal(err)
	}
	code, err := s.App.OAuth.Approve(ctx, u.ID, req)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := s.App.OAuth.ExchangeCode(ctx, c, code, c.RedirectURIs[0], "")
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// ThirdPartyToken is an access token of a client owned by another account
// (a third-party app acting for u) with scopes.
func (s *Server) ThirdPartyToken(t testing.TB, u *users.User, scopes ...string) string {
	t.Helper()
	dev := s.User(t, "dev"+strings.ToLower(u.Username))
	c, secret := s.Client(t, oauth.ClientSpec{Name: "Third Party", OwnerID: dev.ID, RedirectURIs: []string{"https://app.example/cb"}})
	return s.Token(t, u, c, secret, scopes...).AccessToken
}

// Profile sets fields of u's profile through the users service.
func (s *Server) Profile(t testing.TB, u *users.User, p users.Patch) *users.User {
	t.Helper()
	out, err := s.App.Users.Update(context.Background(), u.ID, p)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
