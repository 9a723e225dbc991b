// Package config reads the service's settings from flags and MATCHPOINT_*
// environment variables; a flag wins over its variable, which wins over the
// default.
package config

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"
)

// Config holds every setting.
type Config struct {
	Addr        string
	DatabaseURL string
	BaseURL     string
	DocsURL     string
	LogLevel    string
	LogFormat   string
	// OutboxRetention is how long events every consumer is done with are kept.
	OutboxRetention time.Duration
	// EventReminderInterval is how often each node looks for due event reminders.
	EventReminderInterval time.Duration

	badEnv []string // duration variables that did not parse, reported by Validate
}

// Defaults of the settings.
const (
	DefaultAddr        = "127.0.0.1:8080"
	DefaultDatabaseURL = "sqlite:./data/matchpoint.db"
	DefaultBaseURL     = "http://localhost:8080"
)

// Register adds the settings' flags to fs, with defaults from getenv.
func Register(fs *flag.FlagSet, getenv func(string) string) *Config {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	c := &Config{}
	fs.StringVar(&c.Addr, "addr", env("MATCHPOINT_ADDR", DefaultAddr), "listen address (MATCHPOINT_ADDR)")
	fs.StringVar(&c.DatabaseURL, "database-url", env("MATCHPOINT_DATABASE_URL", DefaultDatabaseURL), "sqlite:PATH or postgres://... (MATCHPOINT_DATABASE_URL)")
	fs.StringVar(&c.BaseURL, "base-url", env("MATCHPOINT_BASE_URL", DefaultBaseURL), "public address of the service (MATCHPOINT_BASE_URL)")
	fs.StringVar(&c.DocsURL, "docs-url", env("MATCHPOINT_DOCS_URL", ""), "error reference address; default BASE_URL/docs/errors (MATCHPOINT_DOCS_URL)")
	fs.StringVar(&c.LogLevel, "log-level", env("MATCHPOINT_LOG_LEVEL", "info"), "debug, info, warn or error (MATCHPOINT_LOG_LEVEL)")
	fs.StringVar(&c.LogFormat, "log-format", env("MATCHPOINT_LOG_FORMAT", "json"), "json or text (MATCHPOINT_LOG_FORMAT)")
	fs.DurationVar(&c.OutboxRetention, "outbox-retention", c.envDuration(getenv, "MATCHPOINT_OUTBOX_RETENTION", 30*24*time.Hour),
		"how long delivered outbox events are kept (MATCHPOINT_OUTBOX_RETENTION)")
	fs.DurationVar(&c.EventReminderInterval, "event-reminder-interval", c.envDuration(getenv, "MATCHPOINT_EVENT_REMINDER_INTERVAL", time.Minute),
		"how often due event reminders are sent (MATCHPOINT_EVENT_REMINDER_INTERVAL)")
	return c
}

// envDuration reads a duration variable; a malformed one keeps the default
// and is reported by Validate.
func (c *Config) envDuration(getenv func(string) string, name string, def time.Duration) time.Duration {
	if v := getenv(name); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
		c.badEnv = append(c.badEnv, name)
	}
	return def
}

// Validate checks the settings and fills derived ones.
func (c *Config) Validate() error {
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("config: base URL %q must be an http(s) address like http://localhost:8080", c.BaseURL)
	}
	if c.DocsURL == "" {
		c.DocsURL = c.BaseURL + "/docs/errors"
	}
	if _, err := c.Level(); err != nil {
		return err
	}
	if len(c.badEnv) > 0 {
		return fmt.Errorf("config: %s must be a duration like 720h", strings.Join(c.badEnv, ", "))
	}
	if c.OutboxRetention <= 0 {
		return errors.New("config: outbox retention must be positive")
	}
	if c.EventReminderInterval <= 0 {
		return errors.New("config: event reminder interval must be positive")
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		return errors.New("config: log format must be json or text")
	}
	return nil
}

// Level is the log level.
func (c *Config) Level() (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return 0, fmt.Errorf("config: log level %q: want debug, info, warn or error", c.LogLevel)
	}
	return l, nil
}
