package apperr

import "net/http"

// statusOf is the one table from error kinds to HTTP statuses, shared by the
// API (problem responses) and the pages (form errors).
var statusOf = map[Kind]int{
	Internal:        http.StatusInternalServerError,
	Invalid:         http.StatusUnprocessableEntity,
	BadRequest:      http.StatusBadRequest,
	NotFound:        http.StatusNotFound,
	Conflict:        http.StatusConflict,
	Unauthenticated: http.StatusUnauthorized,
	Forbidden:       http.StatusForbidden,
	TooLarge:        http.StatusRequestEntityTooLarge,
	RateLimited:     http.StatusTooManyRequests,
}

// HTTPStatus is the status a failure of this kind is answered with.
func (k Kind) HTTPStatus() int {
	if s, ok := statusOf[k]; ok {
		return s
	}
	return http.StatusInternalServerError
}
