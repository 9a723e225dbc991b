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
		"https://user:pw@app.example/cb":       false, // user info
		"https://user@app.example/cb":          false,
		"https://*.app.example/cb":             false, // wildcard
		"https://app.example/cb/*":             false,
		"https://app.example/cb?code=x":        false, // parameters the response adds
		"https://app.example/cb?state=x":       false,
		"https://app.example/cb?error=x":       false,
		"https://app.example/cb?iss=x":         false,
		"https://app.example/cb?x=1&Code=2":    true, // parameter names are case-sensitive
		"https://app.example/cb?codes=1":       true,
		"https://app.example/c\x00b":           false,
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
