// Package config reads the service's settings from flags and MATCHPOINT_*
// environment variables; a flag wins over its variable, which wins over the
// default.
package config

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clientip"
)

// Config holds every setting.
type Config struct {
	Addr        string
	DatabaseURL string
	BaseURL     string // empty: derived from Addr by Validate
	DocsURL     string // empty: BaseURL + /docs/errors
	LogLevel    string
	LogFormat   string // json or text; empty: text on a terminal, json otherwise
	// OutboxRetention is how long events every consumer is done with are kept.
	OutboxRetention time.Duration
	// TrustedProxies are the proxies whose X-Forwarded-For names the client
	// (comma-separated IPs and CIDR ranges); without them, the connection's
	// address is the client's.
	TrustedProxies string
	// Matching rules (zero: the documented defaults of matching.DefaultSettings).
	MatchRequestTTL    time.Duration // a pending match request expires after this
	MatchSuppressAfter int           // showings without action before a candidate is held back
	MatchSuppressFor   time.Duration // how long it is held back
	MatchPendingCap    int           // unanswered requests from which a person is not recommended
	MatchExpiryEvery   time.Duration // how often each node expires due requests

	// Rate limits: counters in Redis when RedisURL is set (several nodes),
	// in process otherwise. AnonymousLimit is the hourly allowance per client
	// IP of requests without a valid credential.
	RedisURL       string
	AnonymousLimit int64

	// Set by Validate when BaseURL or DocsURL were not given, so that
	// Listening can fill in the port a listener on port 0 got.
	derivedBase, derivedDocs bool
	badEnv                   []string // duration variables that did not parse, reported by Validate
	badInt                   []string // integer variables that did not parse, reported by Validate

	// Webhooks (DECISIONS.md, Webhooks).
	WebhookAllowPrivate  bool          // deliver to loopback and private addresses (development, tests)
	WebhookCAFile        string        // PEM certificates trusted besides the system's
	WebhookRetrySchedule string        // comma-separated durations; empty: the default with jitter
	WebhookTimeout       time.Duration // per attempt
	WebhookRetention     time.Duration // how long deliveries are kept
	WebhookEgressIPs     string        // comma-separated addresses or CIDR ranges, published at ip-ranges
	SMTPURL              string        // smtp://user:pass@host:port?from=addr; empty: no email
}

// Defaults of the settings.
const (
	DefaultAnonymousLimit  = 1000
	DefaultOutboxRetention = 30 * 24 * time.Hour
	DefaultAddr            = "127.0.0.1:8080"
	DefaultDatabaseURL     = "sqlite:./data/matchpoint.db"
	DefaultBaseURL         = "http://localhost:8080"
)

func fromEnv(getenv func(string) string) func(name, def string) string {
	return func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
}

// Register adds every setting's flag to fs (the service's command), with
// defaults from getenv.
func Register(fs *flag.FlagSet, getenv func(string) string) *Config {
	env := fromEnv(getenv)
	c := RegisterDatabase(fs, getenv)
	fs.StringVar(&c.Addr, "addr", env("MATCHPOINT_ADDR", DefaultAddr), "listen address (MATCHPOINT_ADDR)")
	fs.StringVar(&c.BaseURL, "base-url", env("MATCHPOINT_BASE_URL", ""),
		"public address of the service (MATCHPOINT_BASE_URL); default http://ADDR, and "+DefaultBaseURL+" for the default address")
	fs.StringVar(&c.DocsURL, "docs-url", env("MATCHPOINT_DOCS_URL", ""), "error reference address; default BASE_URL/docs/errors (MATCHPOINT_DOCS_URL)")
	fs.StringVar(&c.LogLevel, "log-level", env("MATCHPOINT_LOG_LEVEL", "info"), "debug, info, warn or error (MATCHPOINT_LOG_LEVEL)")
	fs.StringVar(&c.LogFormat, "log-format", env("MATCHPOINT_LOG_FORMAT", ""), "json or text (MATCHPOINT_LOG_FORMAT); default text on a terminal, json otherwise")
	fs.StringVar(&c.RedisURL, "redis-url", env("MATCHPOINT_REDIS_URL", ""),
		"redis://host:port/db for rate-limit counters shared by several nodes (MATCHPOINT_REDIS_URL); default: counted in process")
	fs.Int64Var(&c.AnonymousLimit, "rate-limit-anonymous", c.envInt(getenv, "MATCHPOINT_RATE_LIMIT_ANONYMOUS", DefaultAnonymousLimit),
		"requests per hour per client IP without a valid credential (MATCHPOINT_RATE_LIMIT_ANONYMOUS)")
	fs.DurationVar(&c.OutboxRetention, "outbox-retention", c.envDuration(getenv, "MATCHPOINT_OUTBOX_RETENTION", DefaultOutboxRetention),
		"how long delivered outbox events are kept (MATCHPOINT_OUTBOX_RETENTION)")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", env("MATCHPOINT_TRUSTED_PROXIES", ""), "comma-separated IPs and CIDR ranges of proxies whose X-Forwarded-For is believed (MATCHPOINT_TRUSTED_PROXIES)")
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
	return c
}

// RegisterDatabase adds only the database setting to fs, for the operator
// commands that open the database and serve nothing; the other settings keep
// their defaults.
func RegisterDatabase(fs *flag.FlagSet, getenv func(string) string) *Config {
	c := &Config{Addr: DefaultAddr, LogLevel: "info", OutboxRetention: DefaultOutboxRetention, AnonymousLimit: DefaultAnonymousLimit}
	fs.StringVar(&c.DatabaseURL, "database-url", fromEnv(getenv)("MATCHPOINT_DATABASE_URL", DefaultDatabaseURL),
		"sqlite:PATH or postgres://... (MATCHPOINT_DATABASE_URL)")
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

// envInt reads an integer variable; a malformed one keeps the default and is
// reported by Validate.
func (c *Config) envInt(getenv func(string) string, name string, def int64) int64 {
	if v := getenv(name); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
		c.badInt = append(c.badInt, name)
	}
	return def
}

// envCount is envInt for settings held in an int.
func (c *Config) envCount(getenv func(string) string, name string, def int) int {
	return int(c.envInt(getenv, name, int64(def)))
}

// Validate checks the settings and fills derived ones.
func (c *Config) Validate() error {
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("config: listen address %q must be host:port, like %s or :8080", c.Addr, DefaultAddr)
	}
	if c.BaseURL == "" || c.derivedBase {
		c.BaseURL, c.derivedBase = BaseURLFor(c.Addr), true
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("config: base URL %q must be an http(s) address like http://localhost:8080", c.BaseURL)
	}
	if c.DocsURL == "" || c.derivedDocs {
		c.DocsURL, c.derivedDocs = c.BaseURL+"/docs/errors", true
	}
	if _, err := c.Level(); err != nil {
		return err
	}
	if len(c.badEnv) > 0 {
		return fmt.Errorf("config: %s must be a duration like 720h or a whole number", strings.Join(c.badEnv, ", "))
	}
	if c.MatchRequestTTL < 0 || c.MatchSuppressFor < 0 || c.MatchSuppressAfter < 0 || c.MatchPendingCap < 0 || c.MatchExpiryEvery < 0 {
		return errors.New("config: matching settings must not be negative")
	}
	if len(c.badInt) > 0 {
		return fmt.Errorf("config: %s must be a whole number", strings.Join(c.badInt, ", "))
	}
	if c.AnonymousLimit <= 0 {
		return errors.New("config: the anonymous rate limit must be a positive number of requests per hour")
	}
	if c.RedisURL != "" && !strings.HasPrefix(c.RedisURL, "redis://") && !strings.HasPrefix(c.RedisURL, "rediss://") {
		return errors.New("config: the Redis URL must be redis://host:port/db or rediss://...")
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
	if c.LogFormat != "" && c.LogFormat != "json" && c.LogFormat != "text" {
		return errors.New("config: log format must be json or text")
	}
	if _, err := clientip.ParseTrusted(c.TrustedProxies); err != nil {
		return fmt.Errorf("config: MATCHPOINT_TRUSTED_PROXIES: %w", err)
	}
	return nil
}

// Listening records the address the service actually listens on (the port
// of a listener on port 0 is known only then) and derives the base URL from
// it again, unless one was given.
func (c *Config) Listening(addr net.Addr) {
	host, _, _ := net.SplitHostPort(c.Addr)
	_, port, err := net.SplitHostPort(addr.String())
	if err != nil || !c.derivedBase {
		return
	}
	c.Addr = net.JoinHostPort(host, port)
	c.BaseURL = BaseURLFor(c.Addr)
	if c.derivedDocs {
		c.DocsURL = c.BaseURL + "/docs/errors"
	}
}

// BaseURLFor is the address a browser on this machine reaches a service
// listening on addr at: http://ADDR, with a listen-on-every-interface host
// (empty, 0.0.0.0, [::]) read as localhost. The default address keeps the
// documented http://localhost:8080. The base URL is the origin the sign-in
// forms must be posted from, so it has to be where people actually go.
func BaseURLFor(addr string) string {
	if addr == DefaultAddr {
		return DefaultBaseURL
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	if port == "80" {
		if strings.Contains(host, ":") {
			return "http://[" + host + "]"
		}
		return "http://" + host
	}
	return "http://" + net.JoinHostPort(host, port)
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
