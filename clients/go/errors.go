package matchpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// Error is an answer of the API with an error status. Its fields come from
// the problem document (RFC 9457) the API answers with; OAuth endpoints'
// errors ({"error": ...}) fill Code and Detail. Use errors.As to read it,
// or errors.Is with ErrNotFound and the like to test its status:
//
//	var e *matchpoint.Error
//	if errors.As(err, &e) && e.Code == "location_required" { ... }
//	if errors.Is(err, matchpoint.ErrNotFound) { ... }
type Error struct {
	Status    int
	Code      string
	Param     string
	Detail    string
	RequestID string
	Problem   Problem     // the whole problem document
	Header    http.Header // the answer's headers
	Body      []byte      // the raw body
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("matchpoint: %d", e.Status)
	if e.Code != "" {
		msg += " " + e.Code
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Param != "" {
		msg += " (param " + e.Param + ")"
	}
	if e.RequestID != "" {
		msg += " [request " + e.RequestID + "]"
	}
	return msg
}

// statusError is a status class that errors.Is matches an *Error against.
type statusError struct {
	name  string
	match func(status int) bool
}

func (s *statusError) Error() string { return "matchpoint: " + s.name }

// Errors that errors.Is(err, ...) matches by status.
var (
	ErrBadRequest          error = &statusError{"bad request", func(s int) bool { return s == 400 }}
	ErrAuthentication      error = &statusError{"authentication required", func(s int) bool { return s == 401 }}
	ErrPermissionDenied    error = &statusError{"permission denied", func(s int) bool { return s == 403 }}
	ErrNotFound            error = &statusError{"not found", func(s int) bool { return s == 404 }}
	ErrConflict            error = &statusError{"conflict", func(s int) bool { return s == 409 }}
	ErrUnprocessableEntity error = &statusError{"unprocessable entity", func(s int) bool { return s == 422 }}
	ErrRateLimited         error = &statusError{"rate limited", func(s int) bool { return s == 429 }}
	ErrServer              error = &statusError{"server error", func(s int) bool { return s >= 500 }}
)

// Is matches the status classes above.
func (e *Error) Is(target error) bool {
	var s *statusError
	return errors.As(target, &s) && s.match(e.Status)
}

// ConnectionError is a request that got no answer: the connection failed or
// the attempt timed out.
type ConnectionError struct {
	Err     error
	Timeout bool
}

func (e *ConnectionError) Error() string {
	if e.Timeout {
		return "matchpoint: request timed out: " + e.Err.Error()
	}
	return "matchpoint: connection error: " + e.Err.Error()
}

func (e *ConnectionError) Unwrap() error { return e.Err }

// readError reads an error answer and closes it.
func readError(res *http.Response) *Error {
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	e := &Error{Status: res.StatusCode, Header: res.Header, Body: body, RequestID: res.Header.Get("Request-Id")}
	if json.Unmarshal(body, &e.Problem) == nil {
		e.Code, e.Param, e.Detail = e.Problem.Code, e.Problem.Param, e.Problem.Detail
		if e.Problem.RequestID != "" {
			e.RequestID = e.Problem.RequestID
		}
	}
	if e.Code == "" {
		var oauthErr struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(body, &oauthErr) == nil {
			e.Code, e.Detail = oauthErr.Error, oauthErr.Description
		}
	}
	return e
}
