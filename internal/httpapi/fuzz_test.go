package httpapi

import (
	"encoding/base64"
	"testing"
)

// FuzzParseTokenRequest feeds arbitrary bodies and headers to the token
// endpoint's parser: it must never panic, and must either refuse with an
// OAuth error code or return a request whose client comes from exactly one
// place.
func FuzzParseTokenRequest(f *testing.F) {
	f.Add("application/x-www-form-urlencoded", "", "grant_type=authorization_code&code=mpc_x&client_id=app_1&client_secret=s&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb")
	f.Add("application/x-www-form-urlencoded; charset=utf-8", "Basic "+base64.StdEncoding.EncodeToString([]byte("app_1:secret")), "grant_type=refresh_token&refresh_token=mpr_x")
	f.Add("application/json", "", `{"grant_type":"authorization_code"}`)
	f.Add("application/x-www-form-urlencoded", "Basic %%%", "a=%zz&a=2")
	f.Add("", "Bearer x", "grant_type=x&grant_type=y")
	f.Add("application/x-www-form-urlencoded", "", "grant_type=refresh_token&refresh_token=mpr_%00&client_id=app_%FF")
	f.Add("application/x-www-form-urlencoded", "Basic "+base64.StdEncoding.EncodeToString([]byte("app_%00:s%FF")), "grant_type=refresh_token")
	f.Fuzz(func(t *testing.T, contentType, authorization, body string) {
		tr, oe := parseTokenRequest(contentType, authorization, []byte(body))
		if (tr == nil) == (oe == nil) {
			t.Fatalf("want exactly one of request and error, got %v and %v", tr, oe)
		}
		if oe != nil {
			switch oe.Code {
			case "invalid_request", "invalid_client":
			default:
				t.Fatalf("unexpected error code %q", oe.Code)
			}
			if oe.Description == "" {
				t.Fatal("error without a description")
			}
			return
		}
		for k, v := range tr.form {
			if len(v) != 1 {
				t.Fatalf("parameter %q accepted %d times", k, len(v))
			}
			if !cleanString(k) || !cleanString(v[0]) {
				t.Fatalf("parameter %q = %q is not clean text", k, v[0])
			}
		}
		if !cleanString(tr.clientID) || !cleanString(tr.secret) {
			t.Fatalf("client credentials %q %q are not clean text", tr.clientID, tr.secret)
		}
		if tr.viaBasic && tr.form.Get("client_secret") != "" {
			t.Fatal("accepted two client authentication methods")
		}
	})
}
