package apptest

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// Browser is a cookie-keeping HTTP client that follows redirects on the
// service itself, stops at redirects elsewhere (the client's redirect_uri),
// and submits the service's HTML forms the way a person would.
type Browser struct {
	t      testing.TB
	s      *Server
	client *http.Client
	// Origin is sent on form posts, as browsers do; empty sends none.
	Origin string
	// Header is added to every request (X-Forwarded-For, for one).
	Header http.Header
}

// NewBrowser returns a browser with an empty cookie jar.
func (s *Server) NewBrowser(t testing.TB) *Browser {
	jar, _ := cookiejar.New(nil)
	return &Browser{t: t, s: s, Origin: s.URL, client: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Cookies returns the cookies the browser holds for the service.
func (b *Browser) Cookies() []*http.Cookie {
	u, _ := url.Parse(b.s.URL)
	return b.client.Jar.Cookies(u)
}

// Page is a response the browser stopped at.
type Page struct {
	Status   int
	Header   http.Header
	Body     string
	Location *url.URL // set when the browser stopped at a redirect off the service
}

// Form is an HTML form on a page.
type Form struct {
	Action  string
	Fields  url.Values
	Buttons map[string][]string // name -> values of submit buttons
}

// Forms parses every form on the page.
func (p *Page) Forms() []Form {
	doc, err := html.Parse(strings.NewReader(p.Body))
	if err != nil {
		return nil
	}
	var forms []Form
	var cur *Form
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			attr := func(k string) string {
				for _, a := range n.Attr {
					if a.Key == k {
						return a.Val
					}
				}
				return ""
			}
			switch n.Data {
			case "form":
				forms = append(forms, Form{Action: attr("action"), Fields: url.Values{}, Buttons: map[string][]string{}})
				cur = &forms[len(forms)-1]
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c)
				}
				cur = nil
				return
			case "input":
				if cur != nil && attr("name") != "" {
					cur.Fields.Set(attr("name"), attr("value"))
				}
			case "button":
				if cur != nil && attr("name") != "" {
					cur.Buttons[attr("name")] = append(cur.Buttons[attr("name")], attr("value"))
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return forms
}

// Form returns the form posting to action, failing the test if none does.
func (p *Page) Form(t testing.TB, action string) Form {
	t.Helper()
	for _, f := range p.Forms() {
		if f.Action == action {
			return f
		}
	}
	t.Fatalf("no form posting to %s on page (status %d):\n%s", action, p.Status, p.Body)
	return Form{}
}

// Get loads a URL and follows redirects on the service.
func (b *Browser) Get(rawURL string) *Page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

// Submit posts a form with the given changes to its fields.
func (b *Browser) Submit(f Form, set map[string]string) *Page {
	b.t.Helper()
	vals := url.Values{}
	for k, v := range f.Fields {
		vals[k] = append([]string(nil), v...)
	}
	for k, v := range set {
		vals.Set(k, v)
	}
	req, err := http.NewRequest(http.MethodPost, b.s.URL+f.Action, strings.NewReader(vals.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if b.Origin != "" {
		req.Header.Set("Origin", b.Origin)
	}
	return b.do(req)
}

func (b *Browser) do(req *http.Request) *Page {
	b.t.Helper()
	for hops := 0; hops < 10; hops++ {
		for k, vs := range b.Header {
			req.Header[k] = vs
		}
		resp, err := b.client.Do(req)
		if err != nil {
			b.t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		page := &Page{Status: resp.StatusCode, Header: resp.Header, Body: string(body)}
		if resp.StatusCode < 300 || resp.StatusCode >= 400 {
			return page
		}
		loc, err := req.URL.Parse(resp.Header.Get("Location"))
		if err != nil {
			b.t.Fatalf("bad Location %q: %v", resp.Header.Get("Location"), err)
		}
		if loc.Scheme+"://"+loc.Host != b.s.URL {
			page.Location = loc
			return page
		}
		req, _ = http.NewRequest(http.MethodGet, loc.String(), nil)
	}
	b.t.Fatal("too many redirects")
	return nil
}

// Authorize runs the authorization flow in the browser: it loads authURL,
// signs in as username if asked, and answers the consent page with decision
// ("allow" or "deny") if shown. It returns where the browser ended.
func (b *Browser) Authorize(authURL, username, decision string) *Page {
	b.t.Helper()
	p := b.Get(authURL)
	for i := 0; i < 3 && p.Location == nil && p.Status == http.StatusOK; i++ {
		forms := p.Forms()
		switch {
		case hasForm(forms, "/login"):
			p = b.Submit(p.Form(b.t, "/login"), map[string]string{"login": username, "password": Password})
		case hasForm(forms, "/oauth/authorize"):
			p = b.Submit(p.Form(b.t, "/oauth/authorize"), map[string]string{"decision": decision})
		default:
			return p
		}
	}
	return p
}

func hasForm(forms []Form, action string) bool {
	for _, f := range forms {
		if f.Action == action {
			return true
		}
	}
	return false
}
