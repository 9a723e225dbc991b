package web

import (
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/sessions"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// showable returns the failure in err when it is one of the kinds a form
// shows back to the person (wrong password, taken username...); anything
// else is a server error.
func showable(err error, kinds ...apperr.Kind) (*apperr.Error, bool) {
	e, ok := apperr.As(err)
	if !ok || !slices.Contains(kinds, e.Kind) {
		return nil, false
	}
	return e, true
}

// retryAfter sets Retry-After on a throttled answer.
func retryAfter(w http.ResponseWriter, err error) {
	if wait, ok := users.RetryAfter(err); ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
	}
}

// postedForm reads a form post and checks its CSRF token. When it returns
// false the answer has been written.
func (p *Pages) postedForm(w http.ResponseWriter, r *http.Request, form string, onBad func(fe *formError)) (url.Values, bool) {
	f, fe := readForm(r)
	if !p.checkCSRF(r, f, form) {
		p.forbidden(w, r)
		return nil, false
	}
	if fe != nil {
		if onBad != nil {
			onBad(fe)
		} else {
			p.render(w, r, http.StatusBadRequest, "error", map[string]any{"Title": "This form cannot be sent", "Message": fe.Message})
		}
		return nil, false
	}
	return f, true
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
		page := func(status int, rt, login, msg string) {
			p.render(w, r, status, "login", map[string]any{
				"Title": "Sign in", "ReturnTo": rt, "CSRF": p.csrfToken(w, r, "login"), "Login": login,
				"Error": msg, "SignupURL": "/signup?" + url.Values{"return_to": {rt}}.Encode(),
			})
		}
		f, ok := p.postedForm(w, r, "login", func(fe *formError) {
			if fe.TooLong && fe.Field == "password" {
				page(http.StatusUnprocessableEntity, "/docs", "", users.PasswordLengthError().Message)
				return
			}
			status := http.StatusBadRequest
			if fe.TooLong {
				status = http.StatusRequestEntityTooLarge
			}
			page(status, "/docs", "", fe.Message)
		})
		if !ok {
			return
		}
		rt := safeReturn(f.Get("return_to"))
		login := f.Get("login")
		u, err := p.cfg.Users.Login(r.Context(), login, f.Get("password"))
		if err != nil {
			e, ok := showable(err, apperr.Unauthenticated, apperr.RateLimited, apperr.Forbidden)
			if !ok {
				p.serverError(w, r, err)
				return
			}
			retryAfter(w, err)
			page(e.Kind.HTTPStatus(), rt, login, e.Message)
			return
		}
		if err := p.startSession(w, r, u.ID); err != nil {
			p.serverError(w, r, err)
			return
		}
		http.Redirect(w, r, rt, http.StatusSeeOther)
	})
}

// startSession signs the browser in. It replaces any earlier session of this
// browser and draws a new pre-session CSRF cookie: every form token issued
// before sign-in stops working.
func (p *Pages) startSession(w http.ResponseWriter, r *http.Request, userID string) error {
	if c, err := r.Cookie(p.sessionCookie); err == nil {
		_ = p.cfg.Session.End(r.Context(), c.Value)
	}
	tok, err := p.cfg.Session.Start(r.Context(), userID)
	if err != nil {
		return err
	}
	p.setSession(w, tok, int(sessions.TTL.Seconds()))
	p.newBrowserSeed(w)
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
		page := func(status int, rt, field, msg string, reg users.Registration) {
			reg.Password = "" // never sent back
			p.render(w, r, status, "signup", map[string]any{
				"Title": "Create your account", "ReturnTo": rt, "CSRF": p.csrfToken(w, r, "signup"), "MinPassword": users.MinPassword,
				"Error": msg, "Field": field, "Form": reg,
			})
		}
		f, ok := p.postedForm(w, r, "signup", func(fe *formError) {
			switch {
			case fe.TooLong && fe.Field == "password":
				page(http.StatusUnprocessableEntity, "/docs", "password", users.PasswordLengthError().Message, users.Registration{})
			case fe.TooLong:
				page(http.StatusRequestEntityTooLarge, "/docs", fe.Field, fe.Message, users.Registration{})
			default:
				page(http.StatusBadRequest, "/docs", fe.Field, fe.Message, users.Registration{})
			}
		})
		if !ok {
			return
		}
		rt := safeReturn(f.Get("return_to"))
		reg := users.Registration{
			Email: f.Get("email"), Username: f.Get("username"), Password: f.Get("password"),
			FirstName: f.Get("first_name"), LastName: f.Get("last_name"),
		}
		u, err := p.cfg.Users.Register(r.Context(), reg)
		if err != nil {
			e, ok := showable(err, apperr.Invalid, apperr.Conflict, apperr.RateLimited)
			if !ok {
				p.serverError(w, r, err)
				return
			}
			retryAfter(w, err)
			page(e.Kind.HTTPStatus(), rt, e.Param, e.Message, reg)
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
		if _, ok := p.postedForm(w, r, "logout", nil); !ok {
			return
		}
		if c, err := r.Cookie(p.sessionCookie); err == nil {
			if err := p.cfg.Session.End(r.Context(), c.Value); err != nil {
				p.serverError(w, r, err)
				return
			}
		}
		p.setSession(w, "", -1)
		p.newBrowserSeed(w)
		http.Redirect(w, r, "/login", http.StatusSeeOther)
	})
}
