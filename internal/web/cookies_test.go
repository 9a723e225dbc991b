package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Over https the cookies carry the __Host- prefix, so no other host (a
// sibling subdomain) can set or overwrite them; over plain http browsers
// would refuse the prefix, so it is left off.
func TestCookiePrefix(t *testing.T) {
	for base, want := range map[string]string{"https://matchpoint.example": "__Host-mp_csrf", "http://localhost:8080": "mp_csrf"} {
		p, err := New(Config{BaseURL: base, DocsURL: base + "/docs/errors", CSRFKey: []byte("k")})
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		p.Login().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/login", nil))
		cookies := w.Result().Cookies()
		if len(cookies) != 1 || cookies[0].Name != want || cookies[0].Path != "/" || cookies[0].Domain != "" ||
			cookies[0].Secure != strings.HasPrefix(base, "https") || !cookies[0].HttpOnly {
			t.Fatalf("%s: cookies = %+v", base, cookies)
		}
		if p.sessionCookie != strings.TrimSuffix(want, "csrf")+"session" {
			t.Fatalf("%s: session cookie %q", base, p.sessionCookie)
		}
	}
}
