package auth

import (
	"context"
	"slices"
)

// Principal is the caller of an API request: the account it acts as and the
// scopes its credential carries.
type Principal struct {
	UserID   string
	Role     string   // role of the account: member, operator or system
	Scopes   []string // effective scopes of the credential
	ClientID string   // OAuth client, when the credential is an access token
	APIKeyID string   // API key record, when the credential is an API key
	GrantID  string   // OAuth grant (token family), when an access token
	// FirstParty is true for the service's own OAuth clients (owned by the
	// system account), which may do what third-party apps may not.
	FirstParty bool
	// AccountID is the account that pays for the request, whose tier sets the
	// rate limit: the API key's owner, or the OAuth client's owner acting for a
	// user (the user itself when the client is first-party: the service's own
	// apps are not a customer).
	AccountID   string
	Tier        string // AccountID's tier
	HourlyLimit int64  // AccountID's requests per hour
	// Profile is the calling user's account (a *users.User) when the query
	// that checked the credential read it too, else nil. It belongs to this
	// request alone: nothing read with a credential is kept between requests,
	// so a revocation or a change of tier applies to the very next request on
	// every node. It spares a handler serving the caller's own profile a
	// second query.
	Profile any
	// Suspension of the account, read with the credential; the API refuses
	// the request with account_suspended while it holds (only an appeal
	// goes through).
	Suspension *Suspension
}

// Has reports whether the principal carries scope s.
func (p *Principal) Has(s string) bool { return slices.Contains(p.Scopes, s) }

// HasAny reports whether the principal carries at least one of the scopes.
func (p *Principal) HasAny(scopes ...string) bool {
	for _, s := range scopes {
		if p.Has(s) {
			return true
		}
	}
	return false
}

// CredentialKey names the credential behind the request for things scoped to
// one integration, like idempotency keys: one app acting for one user, or one
// API key.
func (p *Principal) CredentialKey() string {
	if p.APIKeyID != "" {
		return "key:" + p.APIKeyID
	}
	return "oauth:" + p.ClientID + ":" + p.UserID
}

// IsOperator reports whether the principal may use operator-only operations:
// an operator account acting with the admin scope.
func (p *Principal) IsOperator() bool {
	return (p.Role == RoleOperator || p.Role == RoleSystem) && p.Has(ScopeAdmin)
}

// Account roles.
const (
	RoleMember   = "member"
	RoleOperator = "operator"
	RoleSystem   = "system" // the first-party account that owns the service's own clients
)

type principalKey struct{}

// WithPrincipal stores p in ctx.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal of the request, or nil.
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}
