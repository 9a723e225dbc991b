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
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/matchpoint-api/matchpoint/internal/analytics"
	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/clientip"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/events"
	"github.com/matchpoint-api/matchpoint/internal/geo"
	"github.com/matchpoint-api/matchpoint/internal/idempotency"
	"github.com/matchpoint-api/matchpoint/internal/matching"
	"github.com/matchpoint-api/matchpoint/internal/messaging"
	"github.com/matchpoint-api/matchpoint/internal/moderation"
	"github.com/matchpoint-api/matchpoint/internal/notifications"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
	"github.com/matchpoint-api/matchpoint/internal/ratelimit"
	"github.com/matchpoint-api/matchpoint/internal/stream"
	"github.com/matchpoint-api/matchpoint/internal/users"
	"github.com/matchpoint-api/matchpoint/internal/web"
	"github.com/matchpoint-api/matchpoint/internal/webhooks"
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
	Webhooks *webhooks.Service
	Events   *events.Service
	Ready    func(context.Context) error // readiness probe (the database)
	Logger   *slog.Logger
	Registry *prometheus.Registry // metrics are registered here and served at /metrics
	ClientIP *clientip.Resolver   // finds the client's address; default: the connection's

	// Rate limits: Limiter counts (default: in process); requests without a
	// valid credential get AnonymousLimit per hour per client IP (default
	// DefaultAnonymousLimit).
	Limiter        ratelimit.Limiter
	AnonymousLimit int64
	Matching       *matching.Service
	Places         func() *geo.Gazetteer // the gazetteer, loaded on first use
	Notifications  *notifications.Service
	// Request analytics: Requests counts every request made with a
	// credential (nil: nothing is counted); Analytics reads the reports.
	Requests  *analytics.Recorder
	Analytics *analytics.Service
	Messaging *messaging.Service
	// The real-time stream: this node's hub, and how often an idle stream
	// gets a heartbeat (default 15 s).
	Stream          *stream.Hub
	StreamHeartbeat time.Duration
	Moderation      *moderation.Service // screens texts; reports, the review queue, suspensions
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
	webhooks *webhooks.Service
	events   *events.Service
	ready    func(context.Context) error
	log      *slog.Logger
	registry *prometheus.Registry
	metrics  *metrics
	problems *problems
	api      huma.API
	clientIP *clientip.Resolver

	limiter        ratelimit.Limiter
	anonymousLimit int64
	rateLimited    *prometheus.CounterVec
	matching       *matching.Service
	places         func() *geo.Gazetteer
	notifications  *notifications.Service
	requests       *analytics.Recorder
	analytics      *analytics.Service
	messaging      *messaging.Service

	stream          *stream.Hub
	streamHeartbeat time.Duration
	moderation      *moderation.Service
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
		web: d.Web, webhooks: d.Webhooks, ready: d.Ready, log: d.Logger, registry: d.Registry, metrics: newMetrics(d.Registry),
		problems: &problems{docsURL: d.DocsURL}, clientIP: d.ClientIP,
		matching: d.Matching, places: d.Places,
		notifications: d.Notifications, events: d.Events,
		requests: d.Requests, analytics: d.Analytics,
		messaging: d.Messaging,
		stream:    d.Stream, streamHeartbeat: d.StreamHeartbeat,
		moderation: d.Moderation,
	}
	if s.streamHeartbeat <= 0 {
		s.streamHeartbeat = 15 * time.Second
	}
	if s.clientIP == nil {
		s.clientIP = clientip.New(nil)
	}
	s.limiter, s.anonymousLimit = d.Limiter, d.AnonymousLimit
	if s.limiter == nil {
		s.limiter = ratelimit.NewLocal(clock.Real{})
	}
	if s.anonymousLimit <= 0 {
		s.anonymousLimit = DefaultAnonymousLimit
	}
	s.rateLimited = registerRateLimitMetrics(d.Registry, s.limiter)
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
	cfg.Components.Schemas = huma.NewMapRegistry("#/components/schemas/", schemaName)
	cfg.Info.Description = "The REST API of Matchpoint, the platform that finds people to play sports with. " +
		"Every request is authenticated with `Authorization: Bearer <token>`, an OAuth 2.0 access token or an API key. " +
		"Errors are `application/problem+json`; see [the error reference](/docs/errors).\n\n" +
		"**Rate limits.** Requests are counted per paying account: the owner of the API key, or the owner of the OAuth client " +
		"acting for a user (the user itself with this service's own applications). Per hour: Free 1,000, Pro 10,000, " +
		"Business 100,000, Enterprise as agreed (1,000,000 until set). The allowance refills continuously (limit/3600 per second) " +
		"and may be spent all at once; no window boundary lets twice the limit through. Requests without a valid credential " +
		"are counted per client IP (IPv6 per /64), 1,000 per hour by default. Every response carries " +
		"`RateLimit-Policy: \"hourly\";q=1000;w=3600` (\"anonymous\" per client IP), " +
		"`RateLimit: \"hourly\";r=<remaining>;t=<seconds until one more is available>`, " +
		"`X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` (Unix time when the whole allowance is back). " +
		"Over the limit the answer is `429` with `Retry-After` (seconds) and a problem of code `rate_limited`."
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
	api.UseMiddleware(s.requireScopes(api), s.refuseNulls(api))
	return api
}
