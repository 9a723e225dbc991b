package clientip

import (
	"net/http"
	"testing"
)

func TestResolver(t *testing.T) {
	trusted, err := ParseTrusted(" 10.0.0.1, 192.168.0.0/16 ,::1")
	if err != nil {
		t.Fatal(err)
	}
	r := New(trusted)
	for _, c := range []struct {
		name, remote string
		xff          []string
		want         string
	}{
		{"no proxy", "203.0.113.9:4000", nil, "203.0.113.9"},
		{"untrusted peer's header is ignored", "203.0.113.9:4000", []string{"198.51.100.1"}, "203.0.113.9"},
		{"trusted proxy reports the client", "10.0.0.1:80", []string{"198.51.100.1"}, "198.51.100.1"},
		{"a spoofed left part is skipped", "10.0.0.1:80", []string{"1.2.3.4, 198.51.100.1"}, "198.51.100.1"},
		{"a chain of trusted proxies", "10.0.0.1:80", []string{"1.2.3.4, 198.51.100.1, 192.168.3.3"}, "198.51.100.1"},
		{"several header lines", "10.0.0.1:80", []string{"1.2.3.4", "198.51.100.1"}, "198.51.100.1"},
		{"all hops trusted", "10.0.0.1:80", []string{"192.168.1.1"}, "192.168.1.1"},
		{"trusted proxy without header", "10.0.0.1:80", nil, "10.0.0.1"},
		{"garbage from the proxy", "10.0.0.1:80", []string{"not-an-ip"}, "10.0.0.1"},
		{"hop with a port", "10.0.0.1:80", []string{"[2001:db8::1]:1234"}, "2001:db8::1"},
		{"IPv6 loopback proxy", "[::1]:80", []string{"198.51.100.7"}, "198.51.100.7"},
		{"IPv4-mapped peer", "[::ffff:10.0.0.1]:80", []string{"198.51.100.8"}, "198.51.100.8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := &http.Request{RemoteAddr: c.remote, Header: http.Header{}}
			for _, v := range c.xff {
				req.Header.Add("X-Forwarded-For", v)
			}
			if got := r.IP(req); got != c.want {
				t.Fatalf("IP = %q, want %q", got, c.want)
			}
		})
	}
	for _, bad := range []string{"10.0.0.1/33", "proxy.example", "10.0.0"} {
		if _, err := ParseTrusted(bad); err == nil {
			t.Errorf("ParseTrusted(%q) accepted", bad)
		}
	}
}
