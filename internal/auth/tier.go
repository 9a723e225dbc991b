package auth

import "slices"

// Account tiers (API document section 8). The tier belongs to the account
// that pays for a credential: an API key's owner, or an OAuth client's owner.
const (
	TierFree       = "free"
	TierPro        = "pro"
	TierBusiness   = "business"
	TierEnterprise = "enterprise"
)

// TierLimits is the default hourly request limit of each tier. Enterprise is
// "custom" in the document: 1,000,000 until an operator sets the account's own.
var TierLimits = map[string]int64{
	TierFree:       1000,
	TierPro:        10000,
	TierBusiness:   100000,
	TierEnterprise: 1000000,
}

// KnownTier reports whether tier names a tier.
func KnownTier(tier string) bool {
	_, ok := TierLimits[tier]
	return ok
}

// HourlyLimit is an account's request limit per hour: its custom limit when
// an operator set one, else its tier's.
func HourlyLimit(tier string, custom *int64) int64 {
	if custom != nil {
		return *custom
	}
	return TierLimits[tier]
}

// TierAllows reports whether a credential owned by an account of tier may
// carry scope: the admin scope is for Enterprise accounts only (DECISIONS.md).
func TierAllows(scope, tier string) bool { return scope != ScopeAdmin || tier == TierEnterprise }

// ForTier drops the scopes an owner's tier no longer allows, so a downgrade
// takes effect on credentials already issued.
func ForTier(scopes []string, tier string) []string {
	if tier == TierEnterprise || !slices.Contains(scopes, ScopeAdmin) {
		return scopes
	}
	return slices.DeleteFunc(slices.Clone(scopes), func(s string) bool { return s == ScopeAdmin })
}
