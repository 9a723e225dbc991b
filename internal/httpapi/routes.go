package httpapi

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// routes registers every route of the service.
func (s *server) routes() http.Handler {
	mux := http.NewServeMux()

	// The REST API. Its operations are registered on their own mux through
	// Huma (one file per resource); every request passes the body limit,
	// authentication, the rate limit and idempotency first.
	apiMux := http.NewServeMux()
	s.api = s.newAPI(apiMux)
	s.registerUsers()
	s.registerVerification()
	s.registerAPIKeys()
	s.registerAuthorizations()
	s.registerSports()
	s.registerWebhooks()
	s.registerMatches()
	s.registerPlaces()
	s.registerBlocks()
	s.registerNotifications()
	s.registerEvents()
	s.registerAnalytics()
	s.registerConversations()
	s.registerMessages()
	s.registerStream()
	s.registerModeration()
	s.documentOAuth()
	apiMux.Handle("/", s.apiFallback(apiMux))
	api := noStore(cors(limitBody(bodyReadDeadline(s.authenticate(s.rateLimit(s.validStrings(s.idempotent(apiMux))))))))
	mux.Handle("/v1/", api)
	// The stream stays open for hours: authenticated and rate limited like
	// the API, without the body and idempotency layers meant for requests.
	mux.Handle("GET /v1/stream", noStore(cors(s.authenticate(s.rateLimit(apiMux)))))
	mux.Handle("/api/v1/", api)
	mux.Handle("/api/v1/webhooks", maturityHeader("beta", api))
	mux.Handle("/api/v1/webhooks/", maturityHeader("beta", api))
	mux.Handle("/v1/analytics/", maturityHeader("beta", api))
	mux.Handle("/v1/moderation/", maturityHeader("alpha", api))
	mux.Handle("/v1/reports", maturityHeader("alpha", api))

	// OAuth 2.0 (API document 4.1): pages for people, endpoints for clients.
	mux.Handle("GET /oauth/authorize", route("GET /oauth/authorize", s.web.Authorize()))
	mux.Handle("POST /oauth/authorize", route("POST /oauth/authorize", s.web.Decide()))
	mux.Handle("POST /oauth/token", route("POST /oauth/token", cors(s.tokenEndpoint())))
	mux.Handle("POST /oauth/revoke", route("POST /oauth/revoke", cors(s.revokeEndpoint())))
	mux.Handle("POST /oauth/introspect", route("POST /oauth/introspect", cors(s.introspectEndpoint())))
	mux.Handle("OPTIONS /oauth/{endpoint}", route("OPTIONS /oauth/{endpoint}", cors(s.oauthNotFound(mux))))
	mux.Handle("/oauth/", route("/oauth/", s.oauthNotFound(mux)))
	mux.Handle("GET /.well-known/oauth-authorization-server", route("GET /.well-known/oauth-authorization-server", s.discovery()))

	// Sign-in pages.
	mux.Handle("GET /login", route("GET /login", s.web.Login()))
	mux.Handle("POST /login", route("POST /login", s.web.LoginSubmit()))
	mux.Handle("GET /signup", route("GET /signup", s.web.Signup()))
	mux.Handle("POST /signup", route("POST /signup", s.web.SignupSubmit()))
	mux.Handle("POST /logout", route("POST /logout", s.web.Logout()))
	mux.Handle("GET /assets/", route("GET /assets/", s.web.Assets()))
	s.dashboardRoutes(mux) // the developer dashboard

	// Documentation, served from the binary.
	mux.Handle("GET /openapi.json", route("GET /openapi.json", s.openAPIDocument()))
	mux.Handle("GET /docs", route("GET /docs", s.web.APIReference(s.api.OpenAPI())))
	mux.Handle("GET /docs/errors", route("GET /docs/errors", s.web.ErrorReference(s.errorCodes())))

	// Operations.
	mux.Handle("GET /healthz", route("GET /healthz", http.HandlerFunc(s.healthz)))
	mux.Handle("GET /readyz", route("GET /readyz", http.HandlerFunc(s.readyz)))
	mux.Handle("GET /metrics", route("GET /metrics", promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{})))
	mux.Handle("GET /{$}", route("GET /", http.RedirectHandler("/docs", http.StatusFound)))

	return s.observe(s.withClientIP(mux))
}
