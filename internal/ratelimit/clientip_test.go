package ratelimit

import (
	"net/http"
	"net/netip"
	"testing"
)

func TestClientIP(t *testing.T) {
	proxies, err := ParseProxies("10.0.0.0/8, ::1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, remote string
		xff          []string
		proxies      []netip.Prefix
		want         string
	}{
		{"no proxies: the connection", "203.0.113.5:4000", []string{"198.51.100.1"}, nil, "203.0.113.5"},
		{"untrusted peer: its header is ignored", "203.0.113.5:4000", []string{"198.51.100.1"}, proxies, "203.0.113.5"},
		{"trusted proxy: the address it appended", "10.1.2.3:4000", []string{"198.51.100.1"}, proxies, "198.51.100.1"},
		{"a forged hop left of the real one", "10.1.2.3:4000", []string{"192.0.2.66, 198.51.100.1"}, proxies, "198.51.100.1"},
		{"two trusted proxies in a row", "10.1.2.3:4000", []string{"198.51.100.1, 10.9.9.9"}, proxies, "198.51.100.1"},
		{"headers split over lines", "10.1.2.3:4000", []string{"192.0.2.66", "198.51.100.1"}, proxies, "198.51.100.1"},
		{"a malformed hop stops the walk", "10.1.2.3:4000", []string{"198.51.100.1, junk"}, proxies, "10.1.2.3"},
		{"trusted proxy, no header", "[::1]:4000", nil, proxies, "::1"},
		{"IPv4 in IPv6", "[::ffff:203.0.113.5]:4000", nil, nil, "203.0.113.5"},
	} {
		r := &http.Request{RemoteAddr: tc.remote, Header: http.Header{}}
		for _, v := range tc.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := ClientIP(r, tc.proxies); got.String() != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	if k := IPKey(netip.MustParseAddr("2001:db8:1:2:3:4:5:6")); k != "ip:2001:db8:1:2::/64" {
		t.Errorf("IPv6 key %s, want its /64", k)
	}
	if k := IPKey(netip.MustParseAddr("203.0.113.5")); k != "ip:203.0.113.5" {
		t.Errorf("IPv4 key %s", k)
	}
}
