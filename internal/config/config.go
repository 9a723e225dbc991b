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
	Moderation         Moderation    // behaviour signals' settings
	// EventReminderInterval is how often each node sends due event reminders
	// (zero: every minute).
	EventReminderInterval time.Duration
	// Request analytics: how often each node adds its counts to the
	// database, and how long hourly and daily rollups are kept.
	AnalyticsFlushInterval time.Duration
	AnalyticsRetention     time.Duration

	// Rate limits: counters in Redis when RedisURL is set (several nodes),
	// in process otherwise. AnonymousLimit is the hourly allowance per client
	// IP of requests without a valid credential.
	RedisURL       string
	AnonymousLimit int64

	// Outbound calls to addresses users chose (webhook endpoints, Web Push
	// endpoints) and notifications.
	WebhookAllowPrivate bool   // reach loopback and private addresses (development, tests)
	WebhookCAFile       string // PEM certificates trusted besides the system's, for every outbound call
	SMTPURL             string // smtp://user:pass@host:port?from=addr or smtps://...; empty: no email
	VAPIDSubject        string // mailto: or https: contact of Web Push; default from the base URL
	APNsKeyFile         string // .p8 key; APNs is off without it
	APNsKeyID           string
	APNsTeamID          string
	APNsTopic           string // the app's bundle id
	APNsURL             string // default the production host
	FCMCredentialsFile  string // service account key (JSON); FCM is off without it
	FCMURL              string // overrides the send endpoint (tests)
	badAllowPrivate     bool

	// Webhooks (DECISIONS.md, Webhooks).
	WebhookRetrySchedule string        // comma-separated durations; empty: the default with jitter
	WebhookTimeout       time.Duration // per attempt
	WebhookRetention     time.Duration // how long deliveries are kept
	WebhookEgressIPs     string        // comma-separated addresses or CIDR ranges, published at ip-ranges

	Stream Stream // the real-time stream (stream.go)

	// Set by Validate when BaseURL or DocsURL were not given, so that
	// Listening can fill in the port a listener on port 0 got.
	derivedBase, derivedDocs bool
	badEnv                   []string // duration variables that did not parse, reported by Validate
	badInt                   []string // integer variables that did not parse, reported by Validate

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
	registerWebhooks(fs, getenv, c)
	registerMatching(fs, getenv, c)
	registerEvents(fs, getenv, c)
	registerAnalytics(fs, getenv, c)
	registerNotifications(fs, env, c)
	registerStream(fs, getenv, c)
	registerModeration(fs, getenv, c)
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
	if err := c.validateMatching(); err != nil {
		return err
	}
	if err := c.validateModeration(); err != nil {
		return err
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
	if err := c.validateWebhooks(); err != nil {
		return err
	}
	if err := c.validateAnalytics(); err != nil {
		return err
	}
	if err := c.validateStream(); err != nil {
		return err
	}
	if c.EventReminderInterval < 0 {
		return errors.New("config: the event reminder interval must be positive")
	}
	if c.LogFormat != "" && c.LogFormat != "json" && c.LogFormat != "text" {
		return errors.New("config: log format must be json or text")
	}
	if _, err := clientip.ParseTrusted(c.TrustedProxies); err != nil {
		return fmt.Errorf("config: MATCHPOINT_TRUSTED_PROXIES: %w", err)
	}
	return c.validateNotifications()
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
