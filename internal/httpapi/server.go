// Package httpapi is the service's HTTP surface: the /v1 REST API (on Huma,
// which also writes the OpenAPI document), the OAuth token endpoints, the
// documentation pages and the operational endpoints. routes.go is the one
// place where every route is registered.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/events"
	"github.com/matchpoint-api/matchpoint/internal/idempotency"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
	"github.com/matchpoint-api/matchpoint/internal/users"
	"github.com/matchpoint-api/matchpoint/internal/web"
)

// Deps is what the HTTP layer serves.
type Deps struct {
	BaseURL  string // public address of the service, e.g. http://localhost:8080
	DocsURL  string // error reference page; default BaseURL + /docs/errors
	Version  string
	Users    *users.Service
	OAuth    *oauth.Service
	Keys     *apikeys.Service
	Idem     *idempotency.Service
	Web      *web.Pages
	Events   *events.Service
	Ready    func(context.Context) error // readiness probe (the database)
	Logger   *slog.Logger
	Registry *prometheus.Registry // metrics are registered here and served at /metrics
}

type server struct {
	baseURL  string
	https    bool // served over https: send HSTS
	version  string
	users    *users.Service
	oauth    *oauth.Service
	keys     *apikeys.Service
	idem     *idempotency.Service
	web      *web.Pages
	events   *events.Service
	ready    func(context.Context) error
	log      *slog.Logger
	registry *prometheus.Registry
	metrics  *metrics
	problems *problems
	api      huma.API
}

var installErrors sync.Once

// New returns the service's HTTP handler.
func New(d Deps) http.Handler {
	if d.DocsURL == "" {
		d.DocsURL = d.BaseURL + "/docs/errors"
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Registry == nil {
		d.Registry = prometheus.NewRegistry()
	}
	s := &server{
		baseURL: d.BaseURL, https: strings.HasPrefix(d.BaseURL, "https://"), version: d.Version, users: d.Users, oauth: d.OAuth, keys: d.Keys, idem: d.Idem,
		web: d.Web, ready: d.Ready, log: d.Logger, registry: d.Registry, metrics: newMetrics(d.Registry),
		problems: &problems{docsURL: d.DocsURL},
		events:   d.Events,
	}
	// Huma builds its errors through package-level hooks. They look up the
	// request's problem builder, so servers with different settings (tests
	// run several) each answer with their own error reference address.
	installErrors.Do(func() {
		fallback := &problems{docsURL: "/docs/errors"}
		huma.NewErrorWithContext = func(hctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
			pb := fallback
			if hctx != nil {
				if p, ok := hctx.Context().Value(problemsKey).(*problems); ok {
					pb = p
				}
			}
			return pb.fromHuma(hctx, status, msg, errs...)
		}
		huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
			return fallback.fromHuma(nil, status, msg, errs...)
		}
	})
	return s.routes()
}

// newAPI configures Huma on mux: our problem format, our OpenAPI address and
// documentation page (no CDN), and the security schemes of the document.
func (s *server) newAPI(mux *http.ServeMux) huma.API {
	cfg := huma.DefaultConfig("Matchpoint API", s.version)
	cfg.OpenAPIPath, cfg.DocsPath, cfg.SchemasPath = "", "", ""
	cfg.CreateHooks = nil // no $schema links in bodies
	cfg.Info.Description = "The REST API of Matchpoint, the platform that finds people to play sports with. " +
		"Every request is authenticated with `Authorization: Bearer <token>`, an OAuth 2.0 access token or an API key. " +
		"Errors are `application/problem+json`; see [the error reference](/docs/errors)."
	cfg.Servers = []*huma.Server{{URL: s.baseURL}}
	scopes := map[string]string{}
	for _, si := range auth.AllScopes {
		scopes[si.Name] = si.Description
	}
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		schemeOAuth: {Type: "oauth2", Description: "OAuth 2.0 authorization code flow with PKCE. Access tokens live 3600 s.",
			Flows: &huma.OAuthFlows{AuthorizationCode: &huma.OAuthFlow{
				AuthorizationURL: s.baseURL + "/oauth/authorize", TokenURL: s.baseURL + "/oauth/token",
				RefreshURL: s.baseURL + "/oauth/token", Scopes: scopes}}},
		schemeAPIKey: {Type: "http", Scheme: "bearer", BearerFormat: "mpk_live_...",
			Description: "An API key, sent as a bearer token. Keys carry scopes like OAuth tokens do."},
	}
	api := humago.New(mux, cfg)
	api.OpenAPI().OnAddOperation = append(api.OpenAPI().OnAddOperation, checkDeclared)
	api.UseMiddleware(s.requireScopes(api))
	return api
}
