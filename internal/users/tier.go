package users

import (
	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
)

// Account tiers and their hourly request limits (API document section 8).
const (
	TierFree       = "free"
	TierPro        = "pro"
	TierBusiness   = "business"
	TierEnterprise = auth.TierEnterprise
)

// TierLimits is the default hourly limit of each tier. Enterprise is "custom"
// in the document: 1,000,000 until an operator sets the account's own.
var TierLimits = map[string]int64{
	TierFree:       1000,
	TierPro:        10000,
	TierBusiness:   100000,
	TierEnterprise: 1000000,
}

// HourlyLimit is the account's request limit per hour.
func (u *User) HourlyLimit() int64 {
	if u.RateLimit != nil {
		return *u.RateLimit
	}
	return TierLimits[u.Tier]
}

// CheckTier validates a tier name and an optional custom limit.
func CheckTier(tier string, limit *int64) error {
	if _, ok := TierLimits[tier]; !ok {
		return apperr.InvalidParam("tier", "invalid_tier", "tier must be one of free, pro, business, enterprise")
	}
	if limit != nil && *limit <= 0 {
		return apperr.InvalidParam("limit", "invalid_limit", "limit must be a positive number of requests per hour")
	}
	return nil
}
