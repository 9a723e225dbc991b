package e2e

import (
	"strings"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
)

func TestAuthorizedApps(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		dev := s.User(t, "developer")
		f := newFlow(t, s, "owner", oauth.ClientSpec{Name: "Court Finder", OwnerID: dev.ID})
		set := f.tokens("read write")
		at := str(set, "access_token")
		k := key(t, s, f.user, "read", "write")

		r := api(t, s, "GET", "/v1/users/me/authorizations", k, "")
		if r.Status != 200 || !strings.Contains(string(r.Body), `"client_name":"Court Finder"`) || !strings.Contains(string(r.Body), `"scopes":["read","write"]`) {
			t.Fatalf("list: %d %s", r.Status, r.Body)
		}
		// The app itself may not look at or undo other apps' access.
		wantProblem(t, s, api(t, s, "GET", "/v1/users/me/authorizations", at, ""), 403, "forbidden", "")

		if r := api(t, s, "DELETE", "/v1/users/me/authorizations/"+f.client.ID, k, ""); r.Status != 204 {
			t.Fatalf("revoke: %d %s", r.Status, r.Body)
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/users/me", at, ""), 401, "invalid_token", "")
		wantOAuthError(t, s, f.refresh(str(set, "refresh_token"), nil), 400, "invalid_grant", "the refresh token has been revoked")
		wantProblem(t, s, api(t, s, "DELETE", "/v1/users/me/authorizations/"+f.client.ID, k, ""), 404, "not_found", "")
		if r := api(t, s, "GET", "/v1/users/me/authorizations", k, ""); strings.Contains(string(r.Body), f.client.ID) {
			t.Fatalf("revoked app still listed: %s", r.Body)
		}
		// The next authorization asks for consent again.
		_, ch := pkce()
		p := f.br.Get(authURL(s, f.client, "read", "again", ch))
		p.Form(t, "/oauth/authorize")
	})
}
