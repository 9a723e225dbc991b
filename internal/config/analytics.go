package config

import (
	"errors"
	"flag"
	"time"
)

// Defaults of request analytics.
const (
	DefaultAnalyticsFlushInterval = 10 * time.Second
	DefaultAnalyticsRetention     = 365 * 24 * time.Hour
)

// registerAnalytics adds the settings of request analytics.
func registerAnalytics(fs *flag.FlagSet, getenv func(string) string, c *Config) {
	fs.DurationVar(&c.AnalyticsFlushInterval, "analytics-flush-interval",
		c.envDuration(getenv, "MATCHPOINT_ANALYTICS_FLUSH_INTERVAL", DefaultAnalyticsFlushInterval),
		"how often each node adds the requests it counted to the database (MATCHPOINT_ANALYTICS_FLUSH_INTERVAL)")
	fs.DurationVar(&c.AnalyticsRetention, "analytics-retention",
		c.envDuration(getenv, "MATCHPOINT_ANALYTICS_RETENTION", DefaultAnalyticsRetention),
		"how long hourly and daily request rollups are kept (MATCHPOINT_ANALYTICS_RETENTION)")
}

func (c *Config) validateAnalytics() error {
	if c.AnalyticsFlushInterval < 0 || c.AnalyticsRetention < 0 {
		return errors.New("config: the analytics flush interval and retention must be positive")
	}
	return nil
}
