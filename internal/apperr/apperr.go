// Package apperr is the domain's error vocabulary. Services return *Error for
// anything a client caused; the HTTP layer maps Kind to a status in one table
// and shows only Code, Message and Param, never the internal cause.
package apperr

import (
	"errors"
	"fmt"
)

// Kind is the class of a failure; the HTTP layer maps each to one status.
type Kind int

const (
	Internal        Kind = iota // a bug or an outage; details are logged, not shown
	Invalid                     // the request is well-formed but its values are not acceptable (422)
	BadRequest                  // the request itself is malformed (400)
	NotFound                    // the thing does not exist or the caller may not know it does (404)
	Conflict                    // the request clashes with current state (409)
	Unauthenticated             // no or bad credentials (401)
	Forbidden                   // credentials fine, permission missing (403)
	TooLarge                    // body over the limit (413)
	RateLimited                 // over the account's rate (429)
)

// Error is a failure with a client-safe description.
type Error struct {
	Kind    Kind
	Code    string // machine-readable, listed on the error reference page
	Message string // human-readable and safe to show
	Param   string // the offending field, if any (JSON path like "skill_levels.tennis")
	Err     error  // internal cause, for logs only
	// Flagged and SuspendedUntil are members of the problem body for the
	// moderation codes: the categories that refused a text
	// (content_blocked), and when an account's suspension ends
	// (account_suspended; RFC 3339, empty until lifted).
	Flagged        []string
	SuspendedUntil string
}

func (e *Error) Error() string {
	s := e.Code + ": " + e.Message
	if e.Param != "" {
		s += " (" + e.Param + ")"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// As returns the *Error inside err, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// IsKind reports whether err carries an *Error of kind k.
func IsKind(err error, k Kind) bool {
	e, ok := As(err)
	return ok && e.Kind == k
}

// InvalidParam is a validation failure of one field.
func InvalidParam(param, code, format string, args ...any) *Error {
	return &Error{Kind: Invalid, Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
}

// NotFoundf says a thing does not exist.
func NotFoundf(format string, args ...any) *Error {
	return &Error{Kind: NotFound, Code: "not_found", Message: fmt.Sprintf(format, args...)}
}

// Conflictf says the request clashes with current state.
func Conflictf(code, param, format string, args ...any) *Error {
	return &Error{Kind: Conflict, Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
}

// Forbiddenf says the caller may not do this.
func Forbiddenf(code, format string, args ...any) *Error {
	return &Error{Kind: Forbidden, Code: code, Message: fmt.Sprintf(format, args...)}
}
