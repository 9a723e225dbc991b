package web

import (
	"context"
	"net/http"
	"strings"

	"github.com/matchpoint-api/matchpoint/internal/oauth"
)

// redirectURIs reads the redirect URIs of an app form: one a line.
func redirectURIs(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func (p *Pages) appsData(ctx context.Context, v *viewer) map[string]any {
	apps, err := p.cfg.OAuth.Apps(ctx, v.User.ID)
	return map[string]any{"Apps": apps, "AppsErr": err, "Scopes": scopeChoices(v)}
}

// Apps is /dashboard/apps: the OAuth apps the account owns, a form to
// register one.
func (p *Pages) Apps() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := p.signedIn(w, r)
		if !ok {
			return
		}
		d := p.appsData(r.Context(), v)
		if err, _ := d["AppsErr"].(error); err != nil {
			p.serverError(w, r, err)
			return
		}
		p.page(w, r, v, http.StatusOK, "dash_apps", "OAuth apps", d)
	})
}

// CreateApp registers an app and shows its secret, this once.
func (p *Pages) CreateApp() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := p.signedIn(w, r)
		if !ok {
			return
		}
		f, ok := p.form(w, r)
		if !ok {
			return
		}
		c, secret, err := p.cfg.OAuth.RegisterClient(r.Context(), oauth.ClientSpec{Name: f.Get("name"), OwnerID: v.User.ID,
			RedirectURIs: redirectURIs(f.Get("redirect_uris")), Scopes: f["scopes"], Public: f.Get("public") == "on"})
		if err != nil {
			p.fail(w, r, v, err, "dash_apps", "OAuth apps", func(ctx context.Context) map[string]any { return p.appsData(ctx, v) })
			return
		}
		p.showApp(w, r, v, http.StatusCreated, c, secret, "")
	})
}

// showApp renders an app's page, with its secret when just made.
func (p *Pages) showApp(w http.ResponseWriter, r *http.Request, v *viewer, status int, c *oauth.Client, secret, errMsg string) {
	n, err := p.cfg.OAuth.AuthorizedUsers(r.Context(), v.User.ID, c.ID)
	if err != nil {
		p.serverError(w, r, err)
		return
	}
	chosen := map[string]bool{}
	for _, s := range c.Scopes {
		chosen[s] = true
	}
	d := map[string]any{"App": c, "Secret": secret, "Authorized": n, "Scopes": scopeChoices(v), "Chosen": chosen,
		"RedirectURIs": strings.Join(c.RedirectURIs, "\n")}
	if errMsg != "" {
		d["Error"] = errMsg
	}
	p.page(w, r, v, status, "dash_app", c.Name, d)
}

// App is /dashboard/apps/{id}: one app, its settings and users.
func (p *Pages) App() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := p.signedIn(w, r)
		if !ok {
			return
		}
		c, err := p.cfg.OAuth.App(r.Context(), v.User.ID, r.PathValue("id"))
		if err != nil {
			p.fail(w, r, v, err, "dash_apps", "OAuth apps", func(ctx context.Context) map[string]any { return p.appsData(ctx, v) })
			return
		}
		p.showApp(w, r, v, http.StatusOK, c, "", "")
	})
}

// EditApp saves an app's name, redirect URIs and scopes.
func (p *Pages) EditApp() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := p.signedIn(w, r)
		if !ok {
			return
		}
		f, ok := p.form(w, r)
		if !ok {
			return
		}
		id := r.PathValue("id")
		c, err := p.cfg.OAuth.UpdateApp(r.Context(), v.User.ID, id, oauth.AppEdit{Name: f.Get("name"),
			RedirectURIs: redirectURIs(f.Get("redirect_uris")), Scopes: f["scopes"]})
		if err != nil {
			cur, gerr := p.cfg.OAuth.App(r.Context(), v.User.ID, id)
			if _, msg, ok := problem(err); ok && gerr == nil {
				p.showApp(w, r, v, http.StatusUnprocessableEntity, cur, "", msg)
				return
			}
			p.fail(w, r, v, err, "dash_apps", "OAuth apps", func(ctx context.Context) map[string]any { return p.appsData(ctx, v) })
			return
		}
		http.Redirect(w, r, "/dashboard/apps/"+c.ID+"?done=saved", http.StatusSeeOther)
	})
}

// RotateApp gives an app a new secret and shows it, this once.
func (p *Pages) RotateApp() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := p.signedIn(w, r)
		if !ok {
			return
		}
		if _, ok := p.form(w, r); !ok {
			return
		}
		c, secret, err := p.cfg.OAuth.RotateAppSecret(r.Context(), v.User.ID, r.PathValue("id"))
		if err != nil {
			p.fail(w, r, v, err, "dash_apps", "OAuth apps", func(ctx context.Context) map[string]any { return p.appsData(ctx, v) })
			return
		}
		p.showApp(w, r, v, http.StatusOK, c, secret, "")
	})
}
