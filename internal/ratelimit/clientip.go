package ratelimit

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ParseProxies reads a comma-separated list of addresses and CIDR prefixes
// (MATCHPOINT_TRUSTED_PROXIES).
func ParseProxies(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address or CIDR prefix", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

func trusted(a netip.Addr, proxies []netip.Prefix) bool {
	for _, p := range proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ClientIP is the address of the client of r: the connection's, or, when
// the connection comes from a trusted proxy, the nearest address in
// X-Forwarded-For that is not itself a trusted proxy. Addresses a client
// put there itself sit to the left of what its proxies appended, so they are
// never reached while an untrusted hop stands in between.
func ClientIP(r *http.Request, proxies []netip.Prefix) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	ip = ip.Unmap().WithZone("")
	if len(proxies) == 0 || !trusted(ip, proxies) {
		return ip
	}
	hops := r.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		parts := strings.Split(hops[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			a, err := netip.ParseAddr(strings.TrimSpace(parts[j]))
			if err != nil {
				return ip // a malformed hop: trust nothing further left
			}
			ip = a.Unmap().WithZone("")
			if !trusted(ip, proxies) {
				return ip
			}
		}
	}
	return ip
}

// IPKey is the bucket of an address: IPv4 addresses one by one, IPv6 by
// /64, the block one subscriber usually gets (counting single IPv6
// addresses would let anyone with a /64 multiply the allowance).
func IPKey(a netip.Addr) string {
	if !a.IsValid() {
		return "ip:unknown"
	}
	if a.Is6() {
		p, _ := a.Prefix(64)
		return "ip:" + p.String()
	}
	return "ip:" + a.String()
}
