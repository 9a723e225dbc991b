package users

import (
	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
)

// Account tiers; the rules about them live in auth.
const (
	TierFree       = auth.TierFree
	TierPro        = auth.TierPro
	TierBusiness   = auth.TierBusiness
	TierEnterprise = auth.TierEnterprise
)

// HourlyLimit is the account's request limit per hour.
func (u *User) HourlyLimit() int64 { return auth.HourlyLimit(u.Tier, u.RateLimit) }

// CheckTier validates a tier name and an optional custom limit.
func CheckTier(tier string, limit *int64) error {
	if !auth.KnownTier(tier) {
		return apperr.InvalidParam("tier", "invalid_tier", "tier must be one of free, pro, business, enterprise")
	}
	if limit != nil && *limit <= 0 {
		return apperr.InvalidParam("limit", "invalid_limit", "limit must be a positive number of requests per hour")
	}
	return nil
}
