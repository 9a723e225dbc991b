package httpapi

import (
	"net/http"
	"strings"
)

// CORS for the bearer-token surfaces (the /v1 API and the OAuth client
// endpoints), so browser apps (public clients with PKCE) can call them. They
// never read cookies, so any origin may call them: a page gains nothing it
// could not do with the token it already holds. The cookie-based pages (sign-in,
// consent) send no CORS headers at all.
var (
	corsAllowHeaders  = strings.Join([]string{"Authorization", "Content-Type", "Idempotency-Key", "Last-Event-ID"}, ", ")
	corsExposeHeaders = strings.Join([]string{"Request-Id", "Idempotent-Replayed", "Location", "WWW-Authenticate",
		"RateLimit-Policy", "RateLimit", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"}, ", ")
	corsMethods = "GET, POST, PATCH, DELETE"
)

// cors adds the response headers, and answers preflight requests before
// authentication (a preflight carries no credentials).
func cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") == "" {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", corsMethods)
			h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
			h.Set("Access-Control-Max-Age", "86400")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}
