package oauth

import "testing"

func TestCheckRedirectURI(t *testing.T) {
	for uri, ok := range map[string]bool{
		"https://app.example/callback":         true,
		"https://app.example:8443/cb?x=1":      true,
		"http://127.0.0.1:9999/callback":       true,
		"http://[::1]/cb":                      true,
		"http://localhost:3000/cb":             true,
		"com.example.app:/oauth2redirect":      true,
		"http://app.example/callback":          false, // plain http off loopback
		"http://127.0.0.1.evil.example/cb":     false,
		"https://app.example/cb#frag":          false,
		"/relative/callback":                   false,
		"myapp:/cb":                            false, // not reverse-domain
		"javascript:alert(1)":                  false,
		"https:///nohost":                      false,
		"http://localhost.evil.example:3000/x": false,
	} {
		if why := CheckRedirectURI(uri); (why == "") != ok {
			t.Errorf("CheckRedirectURI(%q) = %q, want ok=%v", uri, why, ok)
		}
	}
}

func TestPKCE(t *testing.T) {
	// RFC 7636 appendix B.
	if got := S256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"); got != "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM" {
		t.Fatalf("S256 = %q", got)
	}
	if verifyPKCE(S256("short"), "short") {
		t.Fatal("a verifier under 43 characters was accepted")
	}
}
