package config

import (
	"flag"
	"io"
	"net"
	"testing"
)

func parse(t *testing.T, env map[string]string, args ...string) (*Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c := Register(fs, func(k string) string { return env[k] })
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return c, c.Validate()
}

func TestBaseURLFollowsTheAddress(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		base string
	}{
		{"defaults", nil, nil, "http://localhost:8080"},
		{"default address given", nil, []string{"--addr", "127.0.0.1:8080"}, "http://localhost:8080"},
		{"loopback", nil, []string{"--addr", "127.0.0.1:18080"}, "http://127.0.0.1:18080"},
		{"from the environment", map[string]string{"MATCHPOINT_ADDR": "127.0.0.1:18080"}, nil, "http://127.0.0.1:18080"},
		{"every interface", nil, []string{"--addr", "0.0.0.0:9000"}, "http://localhost:9000"},
		{"every IPv6 interface", nil, []string{"--addr", "[::]:9000"}, "http://localhost:9000"},
		{"port only", nil, []string{"--addr", ":9000"}, "http://localhost:9000"},
		{"IPv6 loopback", nil, []string{"--addr", "[::1]:9000"}, "http://[::1]:9000"},
		{"a host name", nil, []string{"--addr", "matchpoint.internal:80"}, "http://matchpoint.internal"},
		{"given base URL wins", nil, []string{"--addr", "0.0.0.0:9000", "--base-url", "https://api.example.com/"}, "https://api.example.com"},
		{"given base URL from the environment", map[string]string{"MATCHPOINT_ADDR": ":9000", "MATCHPOINT_BASE_URL": "https://api.example.com"}, nil, "https://api.example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parse(t, tc.env, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if c.BaseURL != tc.base || c.DocsURL != tc.base+"/docs/errors" {
				t.Errorf("base URL %q, docs %q; want %q", c.BaseURL, c.DocsURL, tc.base)
			}
		})
	}
}

func TestListeningOnPortZero(t *testing.T) {
	c, err := parse(t, nil, "--addr", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.Listening(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 41234})
	if c.BaseURL != "http://127.0.0.1:41234" || c.DocsURL != "http://127.0.0.1:41234/docs/errors" {
		t.Errorf("base URL %q, docs %q", c.BaseURL, c.DocsURL)
	}

	// A given base URL is kept: it is where people reach the service (a proxy).
	c, err = parse(t, nil, "--addr", "127.0.0.1:0", "--base-url", "https://api.example.com", "--docs-url", "https://docs.example.com/errors")
	if err != nil {
		t.Fatal(err)
	}
	c.Listening(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 41234})
	if c.BaseURL != "https://api.example.com" || c.DocsURL != "https://docs.example.com/errors" {
		t.Errorf("base URL %q, docs %q", c.BaseURL, c.DocsURL)
	}
}

func TestValidateRefuses(t *testing.T) {
	for name, args := range map[string][]string{
		"address without port": {"--addr", "localhost"},
		"base URL scheme":      {"--base-url", "ftp://example.com"},
		"log level":            {"--log-level", "loud"},
		"log format":           {"--log-format", "xml"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := parse(t, nil, args...); err == nil {
				t.Errorf("%v accepted", args)
			}
		})
	}
}
