package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
	"github.com/matchpoint-api/matchpoint/internal/store"
)

// TestOAuthWrongMethod: an OAuth endpoint asked with a method it does not
// take says which it takes (405 with Allow), in the OAuth error shape; a path
// that is no endpoint stays 404.
func TestOAuthWrongMethod(t *testing.T) {
	s := apptest.Start(t, store.SQLite)
	for _, tc := range []struct {
		method, path, allow string
	}{
		{"GET", "/oauth/token", "POST"},
		{"PUT", "/oauth/token", "POST"},
		{"GET", "/oauth/revoke", "POST"},
		{"DELETE", "/oauth/introspect", "POST"},
		{"PUT", "/oauth/authorize", "GET, POST"},
		{"PATCH", "/oauth/authorize", "GET, POST"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, s.URL+tc.path, nil)
			r := do(t, req)
			wantOAuthError(t, s, r, http.StatusMethodNotAllowed, oauth.ErrInvalidRequest,
				tc.path+" takes "+tc.allow+", not "+tc.method)
			if got := r.Header.Get("Allow"); got != tc.allow {
				t.Errorf("Allow = %q, want %q", got, tc.allow)
			}
		})
	}
	t.Run("no such endpoint", func(t *testing.T) {
		req, _ := http.NewRequest("GET", s.URL+"/oauth/tokens", nil)
		r := do(t, req)
		wantOAuthError(t, s, r, http.StatusNotFound, oauth.ErrInvalidRequest, "no OAuth endpoint at GET /oauth/tokens")
		if r.Header.Get("Allow") != "" {
			t.Errorf("Allow = %q on a 404", r.Header.Get("Allow"))
		}
	})
	t.Run("CORS preflight still answered", func(t *testing.T) {
		req, _ := http.NewRequest("OPTIONS", s.URL+"/oauth/token", nil)
		req.Header.Set("Origin", "https://app.example")
		req.Header.Set("Access-Control-Request-Method", "POST")
		if r := do(t, req); r.Status != http.StatusNoContent || !strings.Contains(r.Header.Get("Access-Control-Allow-Methods"), "POST") {
			t.Errorf("preflight: %d %v", r.Status, r.Header)
		}
	})
}

// TestThirdPartyRefusalNamesWhatWorks: a third-party app refused account
// management is told what may do it, and nothing that does not exist.
func TestThirdPartyRefusalNamesWhatWorks(t *testing.T) {
	s := apptest.Start(t, store.SQLite)
	dev := s.User(t, "developer")
	f := newFlow(t, s, "player", oauth.ClientSpec{OwnerID: dev.ID})
	at := str(f.tokens("read write"), "access_token")
	p := wantProblem(t, s, api(t, s, "GET", "/v1/api-keys", at, ""), http.StatusForbidden, "forbidden", "")
	detail, _ := p["detail"].(string)
	if strings.Contains(strings.ToLower(detail), "dashboard") || !strings.Contains(detail, "API key") {
		t.Errorf("detail = %q: name the API key or the service's own applications, and no dashboard (there is none)", detail)
	}
}
