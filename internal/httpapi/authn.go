package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/secrets"
)

// Security scheme names in the OpenAPI document.
const (
	schemeOAuth  = "oauth2"
	schemeAPIKey = "apiKey"
)

// errNoCredentials answers an operation that needs a credential and got none.
var errNoCredentials = &apperr.Error{Kind: apperr.Unauthenticated, Code: "unauthenticated",
	Message: "Send an access token or API key in the Authorization header: Bearer <token>."}

// authenticate resolves the bearer credential of every API request. The
// prefix routes it: mpa_ to the OAuth server, mpk_ to API keys. A request
// without one goes on without a principal: the operation decides (only
// operations marked public take it); a credential that is sent and invalid
// is refused here, whatever the operation.
func (s *server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			next.ServeHTTP(w, r)
			return
		}
		p, err := s.principal(r)
		if err != nil {
			// Counted against the client IP like a request without one.
			s.limitAnonymous(w, r, func() { s.unauthorized(w, r, err) })
			return
		}
		setCaller(r.Context(), p)
		if s.suspended(p) && !suspendedMayUse(r) {
			// Every credential of a suspended account: keys and tokens alike,
			// still counted against the paying account's allowance.
			s.limited(w, r, policyAccount, "acct:"+p.AccountID, p.HourlyLimit, func() { s.problems.writeErr(w, r, p.Suspension.Err()) })
			return
		}
		next.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
	})
}

// unauthorized answers 401 with the WWW-Authenticate challenge of RFC 6750.
func (s *server) unauthorized(w http.ResponseWriter, r *http.Request, err error) {
	w.Header().Set("WWW-Authenticate", challenge(err))
	s.problems.writeErr(w, r, err)
}

func challenge(err error) string {
	if e, ok := apperr.As(err); ok && e.Code == "invalid_token" {
		return fmt.Sprintf(`Bearer realm="matchpoint", error="invalid_token", error_description=%q`, e.Message)
	}
	return `Bearer realm="matchpoint"`
}

func (s *server) principal(r *http.Request) (*auth.Principal, error) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return nil, &apperr.Error{Kind: apperr.Unauthenticated, Code: "invalid_token",
			Message: "The Authorization header must be Bearer <token>."}
	}
	tok = strings.TrimSpace(tok)
	switch {
	case strings.HasPrefix(tok, secrets.AccessToken):
		return s.oauth.AuthenticateAccessToken(r.Context(), tok)
	case strings.HasPrefix(tok, "mpk_"):
		return s.keys.Authenticate(r.Context(), tok)
	}
	return nil, &apperr.Error{Kind: apperr.Unauthenticated, Code: "invalid_token", Message: "The token is not an access token or an API key."}
}

// requires declares the scopes an operation needs: any one of them will do.
// It is written into the OpenAPI document, and requireScopes enforces exactly
// what the document says, so the two cannot drift apart. Every operation
// declares its scopes or is marked public(); checkDeclared refuses one with
// neither when it is registered, so a forgotten declaration fails closed, at
// start-up and in every test, instead of letting any credential through.
func requires(scopes ...string) []map[string][]string {
	if len(scopes) == 0 {
		panic("httpapi: requires() needs at least one scope; mark the operation public() instead")
	}
	var out []map[string][]string
	for _, sc := range scopes {
		out = append(out, map[string][]string{schemeOAuth: {sc}})
	}
	for _, sc := range scopes {
		out = append(out, map[string][]string{schemeAPIKey: {sc}})
	}
	return out
}

// publicKey marks an operation that needs no credential, in its Metadata.
const publicKey = "public"

// public is the Metadata of an operation anyone may call without a
// credential, such as published configuration.
func public() map[string]any { return map[string]any{publicKey: true} }

func isPublic(op *huma.Operation) bool { v, _ := op.Metadata[publicKey].(bool); return v }

// checkDeclared is called by Huma for every operation added to the API.
func checkDeclared(_ *huma.OpenAPI, op *huma.Operation) {
	if isPublic(op) == (len(op.Security) > 0) {
		panic(fmt.Sprintf("httpapi: operation %s %s must declare its scopes with requires(...) or be marked public(), not both or neither",
			op.Method, op.Path))
	}
}

// scopesOf reads back the alternatives an operation accepts.
func scopesOf(op *huma.Operation) []string {
	var out []string
	for _, alt := range op.Security {
		for _, sc := range alt[schemeOAuth] {
			if !slices.Contains(out, sc) {
				out = append(out, sc)
			}
		}
	}
	return out
}

// requireScopes is Huma middleware that refuses a request whose credential
// carries none of the operation's scopes: 403 insufficient_scope.
func (s *server) requireScopes(api huma.API) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		op := ctx.Operation()
		setRoute(ctx.Context(), op.Method+" "+op.Path)
		if isPublic(op) {
			next(ctx)
			return
		}
		need := scopesOf(op)
		p := auth.FromContext(ctx.Context())
		if p == nil {
			ctx.SetHeader("WWW-Authenticate", challenge(errNoCredentials))
			_ = huma.WriteErr(api, ctx, http.StatusUnauthorized, "", errNoCredentials)
			return
		}
		if p.HasAny(need...) {
			next(ctx)
			return
		}
		want := strings.Join(need, " ")
		ctx.SetHeader("WWW-Authenticate", fmt.Sprintf(`Bearer realm="matchpoint", error="insufficient_scope", scope=%q`, want))
		_ = huma.WriteErr(api, ctx, http.StatusForbidden, "", &apperr.Error{Kind: apperr.Forbidden, Code: "insufficient_scope",
			Message: fmt.Sprintf("This operation needs one of these scopes: %s.", strings.Join(need, ", "))})
	}
}

// principalOf returns the caller; the API handler chain guarantees one.
func principalOf(ctx context.Context) *auth.Principal {
	p := auth.FromContext(ctx)
	if p == nil {
		panic("httpapi: API handler reached without a principal")
	}
	return p
}

// accountManager admits the credentials that may manage the account's own
// credentials: API keys and first-party clients, not third-party apps, which
// must not see or undo other apps' access (nor mint keys that outlive theirs).
func accountManager(ctx context.Context) (*auth.Principal, error) {
	p := principalOf(ctx)
	if p.APIKeyID == "" && !p.FirstParty {
		return nil, apperr.Forbiddenf("forbidden", "this is managed with an API key or one of this service's own applications, not by third-party applications")
	}
	return p, nil
}

// operator refuses callers that are not an operator account acting with the
// admin scope (scope checks alone let any Enterprise customer through).
func operator(ctx context.Context) (*auth.Principal, error) {
	p := principalOf(ctx)
	if !p.IsOperator() {
		return nil, apperr.Forbiddenf("forbidden", "only operators of this service may review verification requests")
	}
	return p, nil
}
