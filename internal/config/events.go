package config

import (
	"flag"
	"time"
)

// registerEvents adds the settings of sports events.
func registerEvents(fs *flag.FlagSet, getenv func(string) string, c *Config) {
	fs.DurationVar(&c.EventReminderInterval, "event-reminder-interval", c.envDuration(getenv, "MATCHPOINT_EVENT_REMINDER_INTERVAL", time.Minute),
		"how often due event reminders are sent (MATCHPOINT_EVENT_REMINDER_INTERVAL)")
}
