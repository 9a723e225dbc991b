package auth

import "slices"

// TierEnterprise is the only account tier whose credentials (its OAuth
// clients and API keys) may carry the admin scope (DECISIONS.md).
const TierEnterprise = "enterprise"

// TierAllows reports whether a credential owned by an account of tier may
// carry scope.
func TierAllows(scope, tier string) bool { return scope != ScopeAdmin || tier == TierEnterprise }

// ForTier drops the scopes an owner's tier no longer allows, so a downgrade
// takes effect on credentials already issued.
func ForTier(scopes []string, tier string) []string {
	if tier == TierEnterprise || !slices.Contains(scopes, ScopeAdmin) {
		return scopes
	}
	return slices.DeleteFunc(slices.Clone(scopes), func(s string) bool { return s == ScopeAdmin })
}
