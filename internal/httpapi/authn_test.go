package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/auth"
)

// testAPI is a bare API with the service's authentication and scope checks
// and a fixed principal for the credential "good".
func testAPI() (*server, *http.ServeMux) {
	s := &server{baseURL: "http://x", problems: &problems{docsURL: "/docs/errors"}}
	mux := http.NewServeMux()
	s.api = s.newAPI(mux)
	return s, mux
}

func TestOperationsFailClosed(t *testing.T) {
	s, _ := testAPI()
	for name, op := range map[string]huma.Operation{
		"neither scopes nor public": {OperationID: "x1", Method: http.MethodGet, Path: "/v1/x1"},
		"both scopes and public":    {OperationID: "x2", Method: http.MethodGet, Path: "/v1/x2", Security: requires(auth.ScopeRead), Metadata: public()},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("registering the operation did not panic")
				}
			}()
			huma.Register(s.api, op, func(context.Context, *struct{}) (*struct{}, error) { return nil, nil })
		})
	}
	t.Run("requires without scopes", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Fatal("requires() did not panic")
			}
		}()
		requires()
	})
}

func TestPublicAndScopedOperations(t *testing.T) {
	s, mux := testAPI()
	ok := func(context.Context, *struct{}) (*struct{}, error) { return nil, nil }
	huma.Register(s.api, huma.Operation{OperationID: "open", Method: http.MethodGet, Path: "/v1/open", Metadata: public()}, ok)
	huma.Register(s.api, huma.Operation{OperationID: "closed", Method: http.MethodGet, Path: "/v1/closed", Security: requires(auth.ScopeRead)}, ok)
	withPrincipal := func(p *auth.Principal) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if p != nil {
				r = r.WithContext(auth.WithPrincipal(r.Context(), p))
			}
			mux.ServeHTTP(w, r)
		})
	}
	for _, tc := range []struct {
		name   string
		path   string
		p      *auth.Principal
		status int
	}{
		{"public without a credential", "/v1/open", nil, 204},
		{"scoped without a credential", "/v1/closed", nil, 401},
		{"scoped without the scope", "/v1/closed", &auth.Principal{UserID: "usr_x", Scopes: []string{auth.ScopeWrite}}, 403},
		{"scoped with the scope", "/v1/closed", &auth.Principal{UserID: "usr_x", Scopes: []string{auth.ScopeRead}}, 204},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodGet, tc.path, nil)
			r = r.WithContext(context.WithValue(r.Context(), problemsKey, s.problems))
			withPrincipal(tc.p).ServeHTTP(w, r)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			if tc.status == 401 && w.Header().Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
}
