package web

import (
	"net/http"
	"net/url"
	"slices"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/sessions"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// maxFormBytes bounds a page's form post.
const maxFormBytes = 64 << 10

// formError returns the failure in err when it is one of the kinds a form
// shows back to the person (wrong password, taken username...); anything
// else is a server error.
func formError(err error, kinds ...apperr.Kind) (*apperr.Error, bool) {
	e, ok := apperr.As(err)
	if !ok || !slices.Contains(kinds, e.Kind) {
		return nil, false
	}
	return e, true
}

func limitForm(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
}

// Login shows the sign-in form.
func (p *Pages) Login() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt := safeReturn(r.URL.Query().Get("return_to"))
		p.render(w, r, http.StatusOK, "login", map[string]any{
			"Title": "Sign in", "ReturnTo": rt, "CSRF": p.csrfToken(w, r, "login"),
			"SignupURL": "/signup?" + url.Values{"return_to": {rt}}.Encode(),
		})
	})
}

// LoginSubmit checks the credentials and starts a session.
func (p *Pages) LoginSubmit() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limitForm(w, r)
		if !p.checkCSRF(r, "login") {
			p.forbidden(w, r)
			return
		}
		rt := safeReturn(r.PostFormValue("return_to"))
		login := r.PostFormValue("login")
		u, err := p.cfg.Users.Login(r.Context(), login, r.PostFormValue("password"))
		if err != nil {
			e, ok := formError(err, apperr.Unauthenticated, apperr.RateLimited)
			if !ok {
				p.serverError(w, r, err)
				return
			}
			p.render(w, r, e.Kind.HTTPStatus(), "login", map[string]any{
				"Title": "Sign in", "ReturnTo": rt, "CSRF": p.csrfToken(w, r, "login"), "Login": login,
				"Error": e.Message, "SignupURL": "/signup?" + url.Values{"return_to": {rt}}.Encode(),
			})
			return
		}
		if err := p.startSession(w, r, u.ID); err != nil {
			p.serverError(w, r, err)
			return
		}
		http.Redirect(w, r, rt, http.StatusSeeOther)
	})
}

func (p *Pages) startSession(w http.ResponseWriter, r *http.Request, userID string) error {
	// A sign-in replaces any earlier session of this browser.
	if c, err := r.Cookie(sessionCookie); err == nil {
		_ = p.cfg.Session.End(r.Context(), c.Value)
	}
	tok, err := p.cfg.Session.Start(r.Context(), userID)
	if err != nil {
		return err
	}
	p.setSession(w, tok, int(sessions.TTL.Seconds()))
	return nil
}

// Signup shows the registration form.
func (p *Pages) Signup() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.render(w, r, http.StatusOK, "signup", map[string]any{
			"Title": "Create your account", "ReturnTo": safeReturn(r.URL.Query().Get("return_to")), "CSRF": p.csrfToken(w, r, "signup"),
			"MinPassword": users.MinPassword,
		})
	})
}

// SignupSubmit creates the account and signs it in.
func (p *Pages) SignupSubmit() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limitForm(w, r)
		if !p.checkCSRF(r, "signup") {
			p.forbidden(w, r)
			return
		}
		rt := safeReturn(r.PostFormValue("return_to"))
		reg := users.Registration{
			Email: r.PostFormValue("email"), Username: r.PostFormValue("username"), Password: r.PostFormValue("password"),
			FirstName: r.PostFormValue("first_name"), LastName: r.PostFormValue("last_name"),
		}
		u, err := p.cfg.Users.Register(r.Context(), reg)
		if err != nil {
			e, ok := formError(err, apperr.Invalid, apperr.Conflict)
			if !ok {
				p.serverError(w, r, err)
				return
			}
			p.render(w, r, e.Kind.HTTPStatus(), "signup", map[string]any{
				"Title": "Create your account", "ReturnTo": rt, "CSRF": p.csrfToken(w, r, "signup"), "MinPassword": users.MinPassword,
				"Error": e.Message, "Field": e.Param, "Form": reg,
			})
			return
		}
		if err := p.startSession(w, r, u.ID); err != nil {
			p.serverError(w, r, err)
			return
		}
		http.Redirect(w, r, rt, http.StatusSeeOther)
	})
}

// Logout ends the session.
func (p *Pages) Logout() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limitForm(w, r)
		if !p.checkCSRF(r, "logout") {
			p.forbidden(w, r)
			return
		}
		if c, err := r.Cookie(sessionCookie); err == nil {
			if err := p.cfg.Session.End(r.Context(), c.Value); err != nil {
				p.serverError(w, r, err)
				return
			}
		}
		p.setSession(w, "", -1)
		http.Redirect(w, r, "/login", http.StatusSeeOther)
	})
}
