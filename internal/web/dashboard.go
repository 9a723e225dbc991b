package web

import (
	"context"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/analytics"
	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/users"
	"github.com/matchpoint-api/matchpoint/internal/webhooks"
)

// Dashboard is what the developer dashboard manages and reports on.
type Dashboard struct {
	Keys      *apikeys.Service
	Webhooks  *webhooks.Service
	Analytics *analytics.Service
	Clock     clock.Clock
}

// dashboardPages are the dashboard's templates, each parsed with the
// layout and the dashboard's navigation.
var dashboardPages = []string{"dash_home", "dash_keys", "dash_apps", "dash_app", "dash_webhooks", "dash_webhook", "dash_usage", "dash_admin"}

// SetDashboard turns the developer dashboard on.
func (p *Pages) SetDashboard(d Dashboard) error {
	funcs := template.FuncMap{"slug": slug, "join": joinStrings, "when": when, "pct": pct, "ms": ms,
		"list": func(s ...string) []string { return s }, "add": func(a, b int64) int64 { return a + b }}
	for _, name := range dashboardPages {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/dash_nav.html", "templates/"+name+".html")
		if err != nil {
			return err
		}
		p.tmpl[name] = t
	}
	p.dash = &d
	return nil
}

// viewer is the signed-in person and what the pages show of them.
type viewer struct {
	User *users.User
	// Principal acts for the person as the service's own application does:
	// first-party, with every scope their tier allows.
	Principal *auth.Principal
}

// signedIn returns the signed-in person, or sends the browser to sign in and
// come back here.
func (p *Pages) signedIn(w http.ResponseWriter, r *http.Request) (*viewer, bool) {
	if p.dash == nil {
		http.NotFound(w, r)
		return nil, false
	}
	id, err := p.currentUser(r)
	if err != nil {
		p.serverError(w, r, err)
		return nil, false
	}
	var u *users.User
	if id != "" {
		if u, err = p.cfg.Users.Get(r.Context(), id); err != nil && !apperr.IsKind(err, apperr.NotFound) {
			p.serverError(w, r, err)
			return nil, false
		}
	}
	if u == nil {
		back := r.URL.Path
		if r.Method == http.MethodGet && r.URL.RawQuery != "" {
			back += "?" + r.URL.RawQuery
		}
		http.Redirect(w, r, "/login?"+url.Values{"return_to": {back}}.Encode(), http.StatusSeeOther)
		return nil, false
	}
	scopes := []string{auth.ScopeRead, auth.ScopeWrite, auth.ScopeProfile, auth.ScopeMatching, auth.ScopeEvents}
	if auth.TierAllows(auth.ScopeAdmin, u.Tier) {
		scopes = append(scopes, auth.ScopeAdmin)
	}
	return &viewer{User: u, Principal: &auth.Principal{UserID: u.ID, Role: u.Role, Scopes: scopes, FirstParty: true,
		AccountID: u.ID, Tier: u.Tier, HourlyLimit: u.HourlyLimit()}}, true
}

// operator reports whether the person may see the operators' page.
func (v *viewer) operator() bool {
	return v.User.Role == auth.RoleOperator || v.User.Role == auth.RoleSystem
}

// page renders a dashboard page with what every one of them shows.
func (p *Pages) page(w http.ResponseWriter, r *http.Request, v *viewer, status int, name, title string, data map[string]any) {
	if data == nil {
		data = map[string]any{}
	}
	data["Title"], data["User"], data["Operator"] = title, v.User, v.operator()
	data["CSRF"], data["Logout"], data["Path"] = p.csrfToken(w, r, "dashboard"), p.csrfToken(w, r, "logout"), r.URL.Path
	if f := r.URL.Query().Get("done"); f != "" {
		data["Notice"] = notices[f]
	}
	p.render(w, r, status, name, data)
}

// notices are the messages shown after a change, by code (never text from
// the query, which anyone could write into a link).
var notices = map[string]string{
	"revoked": "The key was revoked: it stops working at once.", "saved": "Saved.",
	"verifying": "A new challenge was sent to the endpoint.", "paused": "Deliveries are paused.",
	"resumed": "Deliveries resumed.", "deleted": "The webhook was deleted.", "retried": "The delivery will be sent again.",
	"retried-all": "Every failed delivery of the last 24 hours will be sent again.",
}

// form reads and checks a dashboard form post; false means it was answered.
func (p *Pages) form(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	f, fe := readForm(r)
	if fe != nil && fe.TooLong {
		p.render(w, r, http.StatusRequestEntityTooLarge, "error", map[string]any{"Title": "Too long", "Message": fe.Message + "."})
		return nil, false
	}
	if !p.checkCSRF(r, f, "dashboard") {
		p.forbidden(w, r)
		return nil, false
	}
	if fe != nil {
		p.render(w, r, http.StatusBadRequest, "error", map[string]any{"Title": "Invalid form", "Message": fe.Message + "."})
		return nil, false
	}
	return f, true
}

// problem is what a page shows of a refused change: the service's own
// client-safe message and the field, and the status to answer with.
func problem(err error) (int, string, bool) {
	var e *apperr.Error
	if !errors.As(err, &e) || e.Kind == apperr.Internal {
		return 0, "", false
	}
	msg := e.Message
	if e.Param != "" {
		msg = e.Param + ": " + msg
	}
	return e.Kind.HTTPStatus(), msg, true
}

// fail answers a refused change on the page it came from, or a server error.
func (p *Pages) fail(w http.ResponseWriter, r *http.Request, v *viewer, err error, name, title string, data func(context.Context) map[string]any) {
	status, msg, ok := problem(err)
	if !ok {
		p.serverError(w, r, err)
		return
	}
	d := map[string]any{}
	if data != nil {
		d = data(r.Context())
	}
	d["Error"] = msg
	p.page(w, r, v, status, name, title, d)
}

func (p *Pages) now() time.Time { return p.dash.Clock.Now().UTC() }

func when(t any) string {
	switch v := t.(type) {
	case time.Time:
		if v.IsZero() {
			return "—"
		}
		return v.UTC().Format("2006-01-02 15:04:05 UTC")
	case *time.Time:
		if v == nil {
			return "never"
		}
		return v.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	return ""
}

func pct(v any) string {
	switch f := v.(type) {
	case *float64:
		if f == nil {
			return "—"
		}
		return formatFloat(*f*100, 1) + " %"
	case float64:
		return formatFloat(f*100, 1) + " %"
	}
	return ""
}

func ms(d time.Duration) string { return formatFloat(float64(d.Microseconds())/1000, 1) + " ms" }
