package config

import (
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// registerWebhooks adds the settings of webhook delivery (the outbound
// switches they share with push are registerNotifications').
func registerWebhooks(fs *flag.FlagSet, getenv func(string) string, c *Config) {
	env := fromEnv(getenv)
	fs.StringVar(&c.WebhookRetrySchedule, "webhook-retry-schedule", env("MATCHPOINT_WEBHOOK_RETRY_SCHEDULE", ""),
		"waits before each webhook retry, like 1s,1s,2s (no jitter); default 5s,5m,30m,2h,5h,10h,10h with jitter (MATCHPOINT_WEBHOOK_RETRY_SCHEDULE)")
	fs.DurationVar(&c.WebhookTimeout, "webhook-timeout", c.envDuration(getenv, "MATCHPOINT_WEBHOOK_TIMEOUT", 15*time.Second),
		"time limit of one webhook attempt (MATCHPOINT_WEBHOOK_TIMEOUT)")
	fs.DurationVar(&c.WebhookRetention, "webhook-retention", c.envDuration(getenv, "MATCHPOINT_WEBHOOK_RETENTION", 30*24*time.Hour),
		"how long webhook deliveries are kept (MATCHPOINT_WEBHOOK_RETENTION)")
	fs.StringVar(&c.WebhookEgressIPs, "webhook-egress-ips", env("MATCHPOINT_WEBHOOK_EGRESS_IPS", ""),
		"addresses or CIDR ranges webhooks are sent from, published at /api/v1/webhooks/ip-ranges (MATCHPOINT_WEBHOOK_EGRESS_IPS)")
}

// validateWebhooks checks the webhook settings.
func (c *Config) validateWebhooks() error {
	if _, err := c.RetrySchedule(); err != nil {
		return err
	}
	if _, err := c.EgressIPs(); err != nil {
		return err
	}
	if c.WebhookTimeout < 0 || c.WebhookRetention < 0 {
		return errors.New("config: webhook timeout and retention must be positive")
	}
	return nil
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
