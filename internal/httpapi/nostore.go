package httpapi

import "net/http"

// noStore keeps every API response out of caches unless its operation says
// otherwise: most carry personal data (GET /v1/users/me) or a secret shown
// once (the 201 of a new API key), and a shared cache must keep neither.
func noStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}
