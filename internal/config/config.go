// Package config reads the service's settings from flags and MATCHPOINT_*
// environment variables; a flag wins over its variable, which wins over the
// default.
package config

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
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

	// Webhooks (DECISIONS.md, Webhooks).
	WebhookAllowPrivate  bool          // deliver to loopback and private addresses (development, tests)
	WebhookCAFile        string        // PEM certificates trusted besides the system's
	WebhookRetrySchedule string        // comma-separated durations; empty: the default with jitter
	WebhookTimeout       time.Duration // per attempt
	WebhookRetention     time.Duration // how long deliveries are kept
	WebhookEgressIPs     string        // comma-separated addresses or CIDR ranges, published at ip-ranges
	SMTPURL              string        // smtp://user:pass@host:port?from=addr; empty: no email

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
	fs.BoolVar(&c.WebhookAllowPrivate, "webhook-allow-private", env("MATCHPOINT_WEBHOOK_ALLOW_PRIVATE", "") == "true",
		"deliver webhooks to loopback and private addresses: development and tests only (MATCHPOINT_WEBHOOK_ALLOW_PRIVATE)")
	fs.StringVar(&c.WebhookCAFile, "webhook-ca-file", env("MATCHPOINT_WEBHOOK_CA_FILE", ""), "PEM file of CAs trusted for webhook endpoints besides the system's (MATCHPOINT_WEBHOOK_CA_FILE)")
	fs.StringVar(&c.WebhookRetrySchedule, "webhook-retry-schedule", env("MATCHPOINT_WEBHOOK_RETRY_SCHEDULE", ""),
		"waits before each webhook retry, like 1s,1s,2s (no jitter); default 5s,5m,30m,2h,5h,10h,10h with jitter (MATCHPOINT_WEBHOOK_RETRY_SCHEDULE)")
	fs.DurationVar(&c.WebhookTimeout, "webhook-timeout", c.envDuration(getenv, "MATCHPOINT_WEBHOOK_TIMEOUT", 15*time.Second),
		"time limit of one webhook attempt (MATCHPOINT_WEBHOOK_TIMEOUT)")
	fs.DurationVar(&c.WebhookRetention, "webhook-retention", c.envDuration(getenv, "MATCHPOINT_WEBHOOK_RETENTION", 30*24*time.Hour),
		"how long webhook deliveries are kept (MATCHPOINT_WEBHOOK_RETENTION)")
	fs.StringVar(&c.WebhookEgressIPs, "webhook-egress-ips", env("MATCHPOINT_WEBHOOK_EGRESS_IPS", ""),
		"addresses or CIDR ranges webhooks are sent from, published at /api/v1/webhooks/ip-ranges (MATCHPOINT_WEBHOOK_EGRESS_IPS)")
	fs.StringVar(&c.SMTPURL, "smtp-url", env("MATCHPOINT_SMTP_URL", ""), "smtp://user:password@host:port?from=address for notification email (MATCHPOINT_SMTP_URL)")
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
	if _, err := c.RetrySchedule(); err != nil {
		return err
	}
	if _, err := c.EgressIPs(); err != nil {
		return err
	}
	if c.WebhookTimeout < 0 || c.WebhookRetention < 0 {
		return errors.New("config: webhook timeout and retention must be positive")
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

// RetrySchedule parses the webhook retry schedule; nil means the default.
func (c *Config) RetrySchedule() ([]time.Duration, error) {
	if strings.TrimSpace(c.WebhookRetrySchedule) == "" {
		return nil, nil
	}
	var out []time.Duration
	for _, f := range strings.Split(c.WebhookRetrySchedule, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("config: MATCHPOINT_WEBHOOK_RETRY_SCHEDULE must be positive durations separated by commas, like 1s,1s,2s")
		}
		out = append(out, d)
	}
	return out, nil
}

// EgressIPs parses the published webhook source addresses into CIDR ranges.
func (c *Config) EgressIPs() ([]string, error) {
	var out []string
	for _, f := range strings.Split(c.WebhookEgressIPs, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked().String())
		} else if a, err := netip.ParseAddr(f); err == nil {
			out = append(out, netip.PrefixFrom(a, a.BitLen()).String())
		} else {
			return nil, fmt.Errorf("config: MATCHPOINT_WEBHOOK_EGRESS_IPS: %q is not an address or CIDR range", f)
		}
	}
	return out, nil
}
