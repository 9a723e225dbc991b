package config

import (
	"errors"
	"flag"
	"time"
)

// registerMatching adds the settings of matching (zero: the documented
// defaults of matching.DefaultSettings).
func registerMatching(fs *flag.FlagSet, getenv func(string) string, c *Config) {
	fs.DurationVar(&c.MatchRequestTTL, "match-request-ttl", c.envDuration(getenv, "MATCHPOINT_MATCH_REQUEST_TTL", 7*24*time.Hour),
		"a pending match request expires after this (MATCHPOINT_MATCH_REQUEST_TTL)")
	fs.IntVar(&c.MatchSuppressAfter, "match-suppress-after", c.envCount(getenv, "MATCHPOINT_MATCH_SUPPRESS_AFTER", 5),
		"showings of a candidate without action before it is held back (MATCHPOINT_MATCH_SUPPRESS_AFTER)")
	fs.DurationVar(&c.MatchSuppressFor, "match-suppress-for", c.envDuration(getenv, "MATCHPOINT_MATCH_SUPPRESS_FOR", 7*24*time.Hour),
		"how long a candidate shown too often is held back (MATCHPOINT_MATCH_SUPPRESS_FOR)")
	fs.DurationVar(&c.MatchExpiryEvery, "match-expiry-every", c.envDuration(getenv, "MATCHPOINT_MATCH_EXPIRY_EVERY", time.Minute),
		"how often pending match requests past their time are expired (MATCHPOINT_MATCH_EXPIRY_EVERY)")
	fs.IntVar(&c.MatchPendingCap, "match-pending-cap", c.envCount(getenv, "MATCHPOINT_MATCH_PENDING_CAP", 20),
		"people holding this many unanswered match requests are not recommended (MATCHPOINT_MATCH_PENDING_CAP)")
}

// validateMatching checks the matching settings.
func (c *Config) validateMatching() error {
	if c.MatchRequestTTL < 0 || c.MatchSuppressFor < 0 || c.MatchSuppressAfter < 0 || c.MatchPendingCap < 0 || c.MatchExpiryEvery < 0 {
		return errors.New("config: matching settings must not be negative")
	}
	return nil
}
