// Package web serves the pages people see: sign-up, sign-in, the OAuth
// consent page and the documentation, all rendered on the server from
// templates embedded in the binary, with no script and no CDN.
package web

import (
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/matchpoint-api/matchpoint/internal/audit"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
	"github.com/matchpoint-api/matchpoint/internal/sessions"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// Config is what the pages need to know about the deployment.
type Config struct {
	BaseURL string // public address; its origin is what forms must come from
	DocsURL string // error reference page
	CSRFKey []byte // shared by every node (see store.InstanceKey)
	Users   *users.Service
	OAuth   *oauth.Service
	Session *sessions.Service
	Logger  *slog.Logger
}

// Pages serves the HTML pages.
type Pages struct {
	cfg    Config
	origin string
	secure bool
	tmpl   map[string]*template.Template
	// Cookie names: with the __Host- prefix over https, so that no other
	// host (a sibling subdomain) can set or overwrite them.
	sessionCookie, csrfCookie string
	dash                      *Dashboard // the developer dashboard, once set
}

// New parses the templates and returns the pages.
func New(cfg Config) (*Pages, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, &url.Error{Op: "parse", URL: cfg.BaseURL, Err: err}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	p := &Pages{cfg: cfg, origin: u.Scheme + "://" + u.Host, secure: u.Scheme == "https", tmpl: map[string]*template.Template{},
		sessionCookie: "mp_session", csrfCookie: "mp_csrf"}
	if p.secure {
		p.sessionCookie, p.csrfCookie = "__Host-"+p.sessionCookie, "__Host-"+p.csrfCookie
	}
	funcs := template.FuncMap{"slug": slug, "join": strings.Join}
	for _, name := range []string{"login", "signup", "consent", "error", "apidocs", "errors"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, err
		}
		p.tmpl[name] = t
	}
	return p, nil
}

// pageHeaders keep the pages out of frames, caches and other origins.
func pageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'")
	// same-origin, not no-referrer: under no-referrer browsers send "Origin: null"
	// with form posts, which the CSRF check must refuse.
	h.Set("Referrer-Policy", "same-origin")
}

func (p *Pages) render(w http.ResponseWriter, r *http.Request, status int, name string, data map[string]any) {
	pageHeaders(w)
	w.WriteHeader(status)
	if err := p.tmpl[name].Execute(w, data); err != nil {
		p.log(r).ErrorContext(r.Context(), "render page", "page", name, "error", err.Error())
	}
}

// Assets serves the stylesheet.
func (p *Pages) Assets() http.Handler {
	sub, _ := fs.Sub(assetFS, "assets")
	fsrv := http.StripPrefix("/assets/", http.FileServer(http.FS(sub)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		fsrv.ServeHTTP(w, r)
	})
}

// log is the request's logger (with its request id), or the pages' own.
func (p *Pages) log(r *http.Request) *slog.Logger { return audit.LoggerOr(r.Context(), p.cfg.Logger) }

func (p *Pages) setSession(w http.ResponseWriter, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: p.sessionCookie, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: p.secure, SameSite: http.SameSiteLaxMode})
}

// currentUser returns the signed-in user's id, or "".
func (p *Pages) currentUser(r *http.Request) (string, error) {
	c, err := r.Cookie(p.sessionCookie)
	if err != nil {
		return "", nil
	}
	return p.cfg.Session.User(r.Context(), c.Value)
}

// safeReturn keeps return_to on this site: a path, never another host.
func safeReturn(rt string) string {
	if rt == "" || !cleanString(rt) || !strings.HasPrefix(rt, "/") || strings.HasPrefix(rt, "//") || strings.HasPrefix(rt, "/\\") {
		return "/docs"
	}
	u, err := url.Parse(rt)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return "/docs"
	}
	return rt
}

func (p *Pages) serverError(w http.ResponseWriter, r *http.Request, err error) {
	p.log(r).ErrorContext(r.Context(), "page error", "path", r.URL.Path, "error", err.Error())
	p.render(w, r, http.StatusInternalServerError, "error", map[string]any{
		"Title": "Something went wrong", "Message": "Something went wrong on our side. Please try again.",
	})
}

// slug makes an HTML id from a heading: "Users and profiles" -> "users-and-profiles".
func slug(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), "-")
}
