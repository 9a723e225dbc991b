// Package egress makes the HTTP client the service uses to call addresses
// that its users chose (webhook endpoints, later Web Push endpoints). Such an
// address must never reach into the service's own network: every connection
// is checked at connect time, after DNS resolution, so a name that resolves
// (or re-resolves, DNS rebinding) to a private address is refused too.
package egress

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"
)

// ErrBlocked is returned (wrapped) when a connection would reach an address
// that is not on the public internet.
var ErrBlocked = errors.New("egress: address not allowed")

// blocked lists the ranges that are never a public endpoint: this network,
// private networks, shared address space (CGNAT), loopback, link-local (where
// cloud metadata services live), documentation and benchmarking ranges,
// multicast and reserved space, and the IPv6 equivalents, including the
// transition ranges that embed an IPv4 address (mapped, NAT64, 6to4, Teredo).
var blocked = prefixes(
	"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
	"192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
	"203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
	"::/128", "::1/128", "::ffff:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/32",
	"2001:db8::/32", "2002::/16", "3fff::/20", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
)

// alwaysBlocked stays refused even when private addresses are allowed for
// development: cloud metadata services hand out credentials, and nothing
// useful listens on the unspecified or multicast addresses.
var alwaysBlocked = prefixes("169.254.169.254/32", "fd00:ec2::254/128", "0.0.0.0/32", "::/128", "224.0.0.0/4", "ff00::/8")

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// Policy says which addresses may be reached.
type Policy struct {
	// AllowPrivate lets connections reach loopback and private networks
	// (development and tests: MATCHPOINT_WEBHOOK_ALLOW_PRIVATE=true).
	AllowPrivate bool
}

// Check reports whether ip may be connected to.
func (p Policy) Check(ip netip.Addr) error {
	if !ip.IsValid() {
		return fmt.Errorf("%w: invalid address", ErrBlocked)
	}
	// An IPv4-mapped IPv6 address is checked as the IPv4 address it is, and
	// refused outright without the switch (the mapped range is in blocked).
	for _, r := range alwaysBlocked {
		if r.Contains(ip) || r.Contains(ip.Unmap()) {
			return fmt.Errorf("%w: %s is reserved", ErrBlocked, ip)
		}
	}
	if p.AllowPrivate {
		return nil
	}
	for _, r := range blocked {
		if r.Contains(ip) || r.Contains(ip.Unmap()) {
			return fmt.Errorf("%w: %s is not a public address", ErrBlocked, ip)
		}
	}
	return nil
}

// control is the net.Dialer hook: it runs for every connection attempt with
// the address actually being dialled, after resolution.
func (p Policy) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q", ErrBlocked, address)
	}
	return p.Check(ap.Addr())
}

// CheckURL validates an endpoint address when it is registered: absolute
// https with a host, no credentials, and (when the host is an IP literal)
// an allowed address. Names are only resolved when connecting.
func (p Policy) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return errors.New("must be an absolute https URL")
	}
	if u.Scheme != "https" {
		return errors.New("must use https")
	}
	if u.User != nil {
		return errors.New("must not hold a user name or password")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return errors.New("must not have a fragment")
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if err := p.Check(ip); err != nil {
			return errors.New("must not point at a private, loopback or reserved address")
		}
	} else if h := strings.ToLower(strings.TrimSuffix(host, ".")); !p.AllowPrivate && (h == "localhost" || strings.HasSuffix(h, ".localhost")) {
		return errors.New("must not point at a private, loopback or reserved address")
	}
	return nil
}

// Options configure a client.
type Options struct {
	Policy  Policy
	CAFile  string        // PEM certificates trusted besides the system's
	Timeout time.Duration // whole request, headers and body (default 15 s)
	// MaxConnsPerHost bounds connections to one host; idle ones are kept
	// for reuse up to the same number.
	MaxConnsPerHost int
}

// NewClient returns an HTTP client that dials only allowed addresses, never
// follows redirects, ignores proxy settings (a proxy would make the checked
// address the proxy's) and keeps connections alive for reuse.
func NewClient(o Options) (*http.Client, error) {
	tr, err := NewTransport(o)
	if err != nil {
		return nil, err
	}
	if o.Timeout <= 0 {
		o.Timeout = 15 * time.Second
	}
	return &http.Client{
		Transport: httpsOnly{tr},
		Timeout:   o.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}, nil
}

// NewTransport returns the guarded transport of NewClient.
func NewTransport(o Options) (*http.Transport, error) {
	roots, err := RootCAs(o.CAFile)
	if err != nil {
		return nil, err
	}
	if o.MaxConnsPerHost <= 0 {
		o.MaxConnsPerHost = 64
	}
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: o.Policy.control}
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            d.DialContext,
		TLSClientConfig:        &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  0, // the client's Timeout covers the whole exchange
		MaxIdleConns:           4096,
		MaxIdleConnsPerHost:    o.MaxConnsPerHost,
		MaxConnsPerHost:        o.MaxConnsPerHost,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}, nil
}

// RootCAs returns the system's trusted certificates plus those of caFile.
func RootCAs(caFile string) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if caFile == "" {
		return pool, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("egress: read CA file: %w", err)
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("egress: %s holds no PEM certificate", caFile)
	}
	return pool, nil
}

// Blocked reports whether err is a refusal of this package.
func Blocked(err error) bool { return errors.Is(err, ErrBlocked) }

// httpsOnly refuses plain-http requests, whoever built them.
type httpsOnly struct{ next http.RoundTripper }

func (h httpsOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme != "https" {
		return nil, fmt.Errorf("%w: only https addresses are called", ErrBlocked)
	}
	return h.next.RoundTrip(r)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the transport.
func (h httpsOnly) CloseIdleConnections() {
	if c, ok := h.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
