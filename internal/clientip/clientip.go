// Package clientip finds the address of the party at the other end of a
// request: the connection's peer, or, when that peer is a proxy the operator
// trusts (MATCHPOINT_TRUSTED_PROXIES), the address that proxy reports in
// X-Forwarded-For. Anyone can send X-Forwarded-For, so it is read only from
// trusted proxies, and from the right: each trusted hop appends the address
// it saw, and the first untrusted one from the right is the client.
package clientip

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ParseTrusted reads a comma-separated list of IP addresses and CIDR ranges.
func ParseTrusted(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if strings.Contains(part, "/") {
			p, err := netip.ParsePrefix(part)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy %q is not an IP address or CIDR range", part)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q is not an IP address or CIDR range", part)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// Resolver finds client addresses behind the trusted proxies.
type Resolver struct{ trusted []netip.Prefix }

// New returns a resolver trusting X-Forwarded-For from the given proxies only.
func New(trusted []netip.Prefix) *Resolver { return &Resolver{trusted: trusted} }

func (r *Resolver) isTrusted(a netip.Addr) bool {
	for _, p := range r.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// IP returns the client address of req as a string ("" if the connection's
// address cannot be read, which net/http servers never do).
func (r *Resolver) IP(req *http.Request) string {
	peer, ok := parse(req.RemoteAddr)
	if !ok {
		return ""
	}
	if !r.isTrusted(peer) {
		return peer.String()
	}
	var hops []string
	for _, h := range req.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(h, ",")...)
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parse(strings.TrimSpace(hops[i]))
		if !ok {
			// A hop our proxies did not write sensibly: the last address
			// they vouch for is the best we know.
			break
		}
		client = a
		if !r.isTrusted(a) {
			break
		}
	}
	return client.String()
}

// parse reads "ip", "ip:port" or "[ip]:port".
func parse(s string) (netip.Addr, bool) {
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

// Subscriber is the unit an address is counted in by throttles and rate
// limits: an IPv4 address, or the /64 of an IPv6 one, which is what one
// subscriber usually gets (counting single IPv6 addresses would let anyone
// with a /64 multiply an allowance).
func Subscriber(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil || a.Is4() {
		return ip
	}
	p, _ := a.Prefix(64)
	return p.String()
}
