package httpapi

import (
	"net/http"

	"github.com/matchpoint-api/matchpoint/internal/audit"
)

// withClientIP resolves the caller's address once per request (behind the
// trusted proxies only, from X-Forwarded-For) and hands it, with the
// request's logger, to whatever throttles or logs security events.
func (s *server) withClientIP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := audit.WithRequest(r.Context(), s.clientIP.IP(r), Logger(r.Context()))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
