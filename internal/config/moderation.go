package config

import (
	"errors"
	"flag"
	"strconv"
	"time"
)

// Moderation holds the behaviour signals' settings (zero: the documented
// defaults of moderation.DefaultSettings).
type Moderation struct {
	SignalInterval  time.Duration
	SignalWindow    time.Duration
	NewAccountAge   time.Duration
	ReportsAgainst  int
	BlocksAgainst   int
	NewAccountLinks int
	Fanout          int
	SameText        int
	CaseRisk        float64
}

// registerModeration adds the settings of the behaviour signals.
func registerModeration(fs *flag.FlagSet, getenv func(string) string, c *Config) {
	m := &c.Moderation
	fs.DurationVar(&m.SignalInterval, "moderation-signal-interval", c.envDuration(getenv, "MATCHPOINT_MODERATION_SIGNAL_INTERVAL", time.Minute),
		"how often behaviour signals are recomputed (MATCHPOINT_MODERATION_SIGNAL_INTERVAL)")
	fs.DurationVar(&m.SignalWindow, "moderation-signal-window", c.envDuration(getenv, "MATCHPOINT_MODERATION_SIGNAL_WINDOW", 24*time.Hour),
		"how far back behaviour signals count (MATCHPOINT_MODERATION_SIGNAL_WINDOW)")
	fs.DurationVar(&m.NewAccountAge, "moderation-new-account-age", c.envDuration(getenv, "MATCHPOINT_MODERATION_NEW_ACCOUNT_AGE", 7*24*time.Hour),
		"an account younger than this is new (MATCHPOINT_MODERATION_NEW_ACCOUNT_AGE)")
	for _, t := range []struct {
		v          *int
		flag, name string
		def        int
		doc        string
	}{
		{&m.ReportsAgainst, "moderation-reports-against", "MATCHPOINT_MODERATION_REPORTS_AGAINST", 3, "distinct people reporting one user"},
		{&m.BlocksAgainst, "moderation-blocks-against", "MATCHPOINT_MODERATION_BLOCKS_AGAINST", 5, "people blocking one user"},
		{&m.NewAccountLinks, "moderation-new-account-links", "MATCHPOINT_MODERATION_NEW_ACCOUNT_LINKS", 3, "texts with links by a new account"},
		{&m.Fanout, "moderation-fanout", "MATCHPOINT_MODERATION_FANOUT", 20, "people one sender messages without a match or earlier conversation"},
		{&m.SameText, "moderation-same-text", "MATCHPOINT_MODERATION_SAME_TEXT", 10, "people sent one same text"},
	} {
		fs.IntVar(t.v, t.flag, c.envCount(getenv, t.name, t.def), "behaviour signal threshold: "+t.doc+", within the window ("+t.name+")")
	}
	m.CaseRisk = 0.6
	if v := getenv("MATCHPOINT_MODERATION_CASE_RISK"); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			m.CaseRisk = f
		} else {
			m.CaseRisk = -1 // refused by validateModeration
		}
	}
	fs.Float64Var(&m.CaseRisk, "moderation-case-risk", m.CaseRisk, "a user's behaviour risk (0..1) from which a case opens (MATCHPOINT_MODERATION_CASE_RISK)")
}

// validateModeration checks the behaviour signals' settings.
func (c *Config) validateModeration() error {
	m := c.Moderation
	// Zero keeps the default (commands that register only the database).
	if m.SignalInterval < 0 || m.SignalWindow < 0 || m.NewAccountAge < 0 {
		return errors.New("config: the moderation signal interval, window and new account age must be positive durations")
	}
	if m.ReportsAgainst < 0 || m.BlocksAgainst < 0 || m.NewAccountLinks < 0 || m.Fanout < 0 || m.SameText < 0 {
		return errors.New("config: the moderation signal thresholds must be at least 1")
	}
	if m.CaseRisk < 0 || m.CaseRisk > 1 {
		return errors.New("config: MATCHPOINT_MODERATION_CASE_RISK must be a number above 0 and at most 1")
	}
	return nil
}
