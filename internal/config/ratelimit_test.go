package config

import (
	"strings"
	"testing"
)

func TestRateLimitSettings(t *testing.T) {
	c, err := parse(t, map[string]string{"MATCHPOINT_REDIS_URL": "redis://127.0.0.1:6379/2",
		"MATCHPOINT_RATE_LIMIT_ANONYMOUS": "60", "MATCHPOINT_TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.1 ,::1"})
	if err != nil {
		t.Fatal(err)
	}
	if c.RedisURL != "redis://127.0.0.1:6379/2" || c.AnonymousLimit != 60 {
		t.Errorf("got Redis %q, anonymous limit %d", c.RedisURL, c.AnonymousLimit)
	}
	if c.TrustedProxies != "10.0.0.0/8, 192.0.2.1 ,::1" {
		t.Errorf("proxies %q", c.TrustedProxies)
	}
	if c, err := parse(t, nil); err != nil || c.AnonymousLimit != DefaultAnonymousLimit || c.RedisURL != "" {
		t.Errorf("defaults: %+v %v", c, err)
	}
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"MATCHPOINT_RATE_LIMIT_ANONYMOUS": "lots"}, nil, "MATCHPOINT_RATE_LIMIT_ANONYMOUS must be a whole number"},
		{nil, []string{"--rate-limit-anonymous", "0"}, "anonymous rate limit must be a positive"},
		{map[string]string{"MATCHPOINT_REDIS_URL": "127.0.0.1:6379"}, nil, "Redis URL must be redis://"},
		{map[string]string{"MATCHPOINT_TRUSTED_PROXIES": "10.0.0.0/8,nginx"}, nil, `MATCHPOINT_TRUSTED_PROXIES`},
	} {
		if _, err := parse(t, tc.env, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: error %v, want %q", tc.env, tc.args, err, tc.want)
		}
	}
}
