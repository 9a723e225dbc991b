// Package audit carries what a request says about its caller's network
// origin (the client IP) and writes security events (ASVS 7.2): sign-in
// decisions, lockouts, reuse of single-use credentials, use of revoked ones,
// and consent given or withdrawn. Each event line holds the request id (from
// the request's logger), the client IP and ids, never a secret or the text a
// person typed (a password typed into the login field would otherwise end up
// in the log).
package audit

import (
	"context"
	"log/slog"
)

// Event names. They are stable: alerting rules match on them.
const (
	LoginSucceeded        = "login_succeeded"
	LoginFailed           = "login_failed"
	LoginLocked           = "login_locked"    // a failure reached a limit: attempts are refused for a while
	LoginThrottled        = "login_throttled" // an attempt refused because of a lock
	SignupThrottled       = "signup_throttled"
	CodeReused            = "oauth_code_reused"
	RefreshTokenReused    = "oauth_refresh_token_reused"
	RevokedCredentialUsed = "revoked_credential_used"
	ConsentGranted        = "oauth_consent_granted"
	ConsentDenied         = "oauth_consent_denied"
	ConsentRevoked        = "oauth_consent_revoked"
	FormRefused           = "form_refused" // a page form failed its CSRF or origin check
)

type requestKey struct{}

type request struct {
	ip  string
	log *slog.Logger
}

// WithRequest stores the request's client IP and logger (which already
// carries the request id) in ctx.
func WithRequest(ctx context.Context, clientIP string, log *slog.Logger) context.Context {
	return context.WithValue(ctx, requestKey{}, request{ip: clientIP, log: log})
}

// ClientIP returns the caller's address, or "" outside an HTTP request (the
// CLI, tests calling a service directly).
func ClientIP(ctx context.Context) string {
	r, _ := ctx.Value(requestKey{}).(request)
	return r.ip
}

// Logger returns the request's logger, or the default one.
func Logger(ctx context.Context) *slog.Logger { return LoggerOr(ctx, slog.Default()) }

// LoggerOr returns the request's logger, or fallback.
func LoggerOr(ctx context.Context, fallback *slog.Logger) *slog.Logger {
	if r, ok := ctx.Value(requestKey{}).(request); ok && r.log != nil {
		return r.log
	}
	return fallback
}

// Event logs a security event with the client IP and the request id.
func Event(ctx context.Context, level slog.Level, name string, attrs ...slog.Attr) {
	all := make([]slog.Attr, 0, len(attrs)+2)
	all = append(all, slog.String("event", name), slog.String("client_ip", ClientIP(ctx)))
	Logger(ctx).LogAttrs(ctx, level, "security event", append(all, attrs...)...)
}
