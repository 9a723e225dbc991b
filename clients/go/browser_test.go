package matchpoint_test

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
)

// signIn plays the person in the OAuth flow: it opens authorizeURL in a
// cookie-keeping browser, fills in the service's login form, allows the
// consent form, and returns the address the service redirected to (the
// client's redirect_uri with the code), which it does not follow.
func signIn(base, authorizeURL, login, password string) (*url.URL, error) {
	jar, _ := cookiejar.New(nil)
	b := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	origin, _ := url.Parse(base)
	page, loc, err := browse(b, origin, http.MethodGet, authorizeURL, nil)
	for step := 0; err == nil && loc == nil && step < 4; step++ {
		forms := parseForms(page)
		switch {
		case forms["/login"] != nil:
			f := forms["/login"]
			f.Set("login", login)
			f.Set("password", password)
			page, loc, err = browse(b, origin, http.MethodPost, base+"/login", f)
		case forms["/oauth/authorize"] != nil:
			f := forms["/oauth/authorize"]
			f.Set("decision", "allow")
			page, loc, err = browse(b, origin, http.MethodPost, base+"/oauth/authorize", f)
		default:
			return nil, fmt.Errorf("no login or consent form on the page:\n%s", page)
		}
	}
	if err != nil {
		return nil, err
	}
	if loc == nil {
		return nil, fmt.Errorf("the flow did not end at the redirect URI:\n%s", page)
	}
	return loc, nil
}

// browse sends a request and follows redirects on the service; it stops at
// a redirect elsewhere and returns its address.
func browse(b *http.Client, origin *url.URL, method, target string, form url.Values) (string, *url.URL, error) {
	for hops := 0; hops < 10; hops++ {
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, err := http.NewRequest(method, target, body)
		if err != nil {
			return "", nil, err
		}
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", origin.Scheme+"://"+origin.Host)
		}
		res, err := b.Do(req)
		if err != nil {
			return "", nil, err
		}
		page, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode < 300 || res.StatusCode >= 400 {
			if res.StatusCode >= 400 {
				return "", nil, fmt.Errorf("%s %s: %d\n%s", method, target, res.StatusCode, page)
			}
			return string(page), nil, nil
		}
		loc, err := req.URL.Parse(res.Header.Get("Location"))
		if err != nil {
			return "", nil, err
		}
		if loc.Host != origin.Host {
			return "", loc, nil
		}
		method, target, form = http.MethodGet, loc.String(), nil
	}
	return "", nil, fmt.Errorf("too many redirects")
}

var (
	formRe  = regexp.MustCompile(`(?s)<form\b([^>]*)>(.*?)</form>`)
	inputRe = regexp.MustCompile(`<input\b([^>]*)>`)
	attrRe  = regexp.MustCompile(`([a-z_-]+)="([^"]*)"`)
)

// parseForms reads the service's forms by action: their hidden and text
// inputs with their values (the pages are the service's own, simple HTML).
func parseForms(page string) map[string]url.Values {
	out := map[string]url.Values{}
	for _, f := range formRe.FindAllStringSubmatch(page, -1) {
		action := attrs(f[1])["action"]
		vals := url.Values{}
		for _, in := range inputRe.FindAllStringSubmatch(f[2], -1) {
			a := attrs(in[1])
			if a["name"] != "" {
				vals.Set(a["name"], a["value"])
			}
		}
		out[action] = vals
	}
	return out
}

func attrs(s string) map[string]string {
	m := map[string]string{}
	for _, a := range attrRe.FindAllStringSubmatch(s, -1) {
		m[a[1]] = html.UnescapeString(a[2])
	}
	return m
}
