// Package oauth is Matchpoint's OAuth 2.0 authorization server: clients, the
// authorization-code grant with PKCE, refresh-token rotation with reuse
// detection, revocation (RFC 7009) and introspection (RFC 7662).
package oauth

import "fmt"

// Error is an OAuth error of RFC 6749 section 5.2 / 4.1.2.1.
type Error struct {
	Code        string
	Description string
}

func (e *Error) Error() string { return e.Code + ": " + e.Description }

// Error codes (API document section 7, plus RFC 6749's).
const (
	ErrInvalidRequest          = "invalid_request"
	ErrInvalidClient           = "invalid_client"
	ErrInvalidGrant            = "invalid_grant"
	ErrUnauthorizedClient      = "unauthorized_client"
	ErrUnsupportedGrantType    = "unsupported_grant_type"
	ErrInvalidScope            = "invalid_scope"
	ErrAccessDenied            = "access_denied"
	ErrUnsupportedResponseType = "unsupported_response_type"
	ErrServerError             = "server_error"
)

// ErrorCodes describes every code for the error reference page.
var ErrorCodes = []struct{ Code, Meaning string }{
	{ErrInvalidRequest, "The request is missing a parameter, repeats one, has an unsupported value, or is otherwise malformed (for example, a token request that is not form-encoded, or a public client without PKCE)."},
	{ErrInvalidClient, "Client authentication failed: the client ID or secret is invalid, or the client is unknown or revoked. The token endpoint answers 401."},
	{ErrInvalidGrant, "The authorization code or refresh token is invalid, expired, already used, revoked, issued to another client, or does not match the redirect_uri or the PKCE code_verifier."},
	{ErrUnauthorizedClient, "The client is not registered for the requested grant type or response type."},
	{ErrUnsupportedGrantType, "The server does not know the grant_type (it knows authorization_code and refresh_token)."},
	{ErrInvalidScope, "A requested scope is unknown, not allowed for this client (admin needs an Enterprise account), or broader than the original grant."},
	{ErrAccessDenied, "The user denied the authorization request."},
	{ErrUnsupportedResponseType, "The response_type is not supported (only code is)."},
	{ErrServerError, "The server met an unexpected condition. Retry later."},
}

// Status is the HTTP status the token, revocation and introspection
// endpoints answer an error code with (DECISIONS.md): 401 when the client
// failed to authenticate, 500 for the server's own failure, else 400.
func Status(code string) int {
	switch code {
	case ErrInvalidClient:
		return 401
	case ErrServerError:
		return 500
	}
	return 400
}

func oerr(code, format string, args ...any) *Error {
	return &Error{Code: code, Description: fmt.Sprintf(format, args...)}
}

// RedirectableError is an authorization error that may be sent back to the
// client's redirect_uri. Errors about the client or the redirect_uri itself
// are never redirected (RFC 6749 4.1.2.1): they go to the user instead.
type RedirectableError struct {
	Err         *Error
	RedirectURI string
	State       string
}

func (e *RedirectableError) Error() string { return e.Err.Error() }
