package egress

import (
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tlsServer is an https server on loopback and a CA file that trusts it.
func tlsServer(t *testing.T) (port, caFile string) {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	t.Cleanup(srv.Close)
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	b := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(caFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	return port, caFile
}

// TestSSRF: every address that is not on the public internet is refused at
// connect time without the switch, whether written as a literal, reached
// through a DNS name, or asked for over plain http. The refusal happens in
// the dialer's Control hook, before any packet is sent.
func TestSSRF(t *testing.T) {
	port, caFile := tlsServer(t)
	guarded, err := NewClient(Options{CAFile: caFile})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, url string }{
		{"loopback", "https://127.0.0.1:" + port + "/"},
		{"loopback elsewhere in 127/8", "https://127.9.9.9:" + port + "/"},
		{"10/8", "https://10.1.2.3:" + port + "/"},
		{"172.16/12", "https://172.20.0.1:" + port + "/"},
		{"192.168/16", "https://192.168.1.1:" + port + "/"},
		{"100.64/10 (CGNAT)", "https://100.100.0.1:" + port + "/"},
		{"cloud metadata", "https://169.254.169.254:" + port + "/latest/meta-data/"},
		{"link-local", "https://169.254.10.10:" + port + "/"},
		{"this network", "https://0.0.0.0:" + port + "/"},
		{"multicast", "https://224.0.0.1:" + port + "/"},
		{"reserved", "https://240.0.0.1:" + port + "/"},
		{"IPv6 loopback", "https://[::1]:" + port + "/"},
		{"IPv6 ULA fc00::/7", "https://[fd12:3456::1]:" + port + "/"},
		{"IPv6 link-local", "https://[fe80::1]:" + port + "/"},
		{"IPv4-mapped IPv6", "https://[::ffff:127.0.0.1]:" + port + "/"},
		{"IPv4-mapped private", "https://[::ffff:10.0.0.1]:" + port + "/"},
		{"NAT64 of a private address", "https://[64:ff9b::a00:1]:" + port + "/"},
		{"DNS name resolving to 127.0.0.1", "https://localhost:" + port + "/"},
		{"plain http", "http://127.0.0.1:" + port + "/"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := guarded.Get(c.url)
			if err == nil {
				res.Body.Close()
				t.Fatalf("GET %s succeeded with status %d", c.url, res.StatusCode)
			}
			if !Blocked(err) {
				t.Fatalf("GET %s: %v, want a refusal of the egress policy", c.url, err)
			}
			if err := (Policy{}).CheckURL(c.url); err == nil && !strings.Contains(c.name, "DNS") {
				t.Errorf("CheckURL(%s) accepted it", c.url)
			}
		})
	}
}

// TestAllowPrivate: the switch opens loopback (tests, development) and the
// extra CA is trusted; metadata addresses stay closed.
func TestAllowPrivate(t *testing.T) {
	port, caFile := tlsServer(t)
	open, err := NewClient(Options{Policy: Policy{AllowPrivate: true}, CAFile: caFile})
	if err != nil {
		t.Fatal(err)
	}
	res, err := open.Get("https://127.0.0.1:" + port + "/")
	if err != nil {
		t.Fatalf("loopback with the switch: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != 204 {
		t.Fatalf("status %d", res.StatusCode)
	}
	if _, err := open.Get("https://169.254.169.254:" + port + "/"); !Blocked(err) {
		t.Fatalf("metadata with the switch: %v, want refused", err)
	}
	if _, err := open.Get("http://127.0.0.1:" + port + "/"); !Blocked(err) {
		t.Fatalf("plain http with the switch: %v, want refused", err)
	}
	// Without the CA file, the test server's certificate is not trusted.
	plain, _ := NewClient(Options{Policy: Policy{AllowPrivate: true}})
	if _, err := plain.Get("https://127.0.0.1:" + port + "/"); err == nil || Blocked(err) {
		t.Fatalf("untrusted certificate: %v, want a TLS error", err)
	}
}

func TestPublicAddressesPass(t *testing.T) {
	for _, s := range []string{"8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "93.184.216.34"} {
		if err := (Policy{}).Check(netip.MustParseAddr(s)); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	for _, u := range []string{"ftp://example.com/", "https://user:pw@example.com/", "https:///x", "example.com/hook", "https://example.com/#x"} {
		if err := (Policy{}).CheckURL(u); err == nil {
			t.Errorf("CheckURL(%q) accepted it", u)
		}
	}
	if err := (Policy{}).CheckURL("https://hooks.example.com/matchpoint?x=1"); err != nil {
		t.Error(err)
	}
}
