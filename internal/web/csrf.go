package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/matchpoint-api/matchpoint/internal/audit"
)

// CSRF defence, in three layers: SameSite=Lax cookies; a per-form token that
// a cross-site page cannot read or compute; and an Origin (or Referer) check
// on every form post.
//
// The token is an HMAC, under a key shared by all nodes, of the form's name
// and the browser's session: the session cookie once signed in, a random
// pre-session cookie before. Signing in starts a new session and draws a new
// pre-session cookie, so every token issued before sign-in stops working,
// and a token is good only with the session it was issued to.

// csrfSeed is what the tokens of this request are bound to.
func (p *Pages) csrfSeed(r *http.Request) (string, bool) {
	if c, err := r.Cookie(p.sessionCookie); err == nil && c.Value != "" {
		return "session|" + c.Value, true
	}
	if c, err := r.Cookie(p.csrfCookie); err == nil && len(c.Value) >= 32 {
		return "browser|" + c.Value, true
	}
	return "", false
}

// newBrowserSeed sets a fresh pre-session cookie and returns its seed.
func (p *Pages) newBrowserSeed(w http.ResponseWriter) string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	v := base64.RawURLEncoding.EncodeToString(b[:])
	http.SetCookie(w, &http.Cookie{Name: p.csrfCookie, Value: v, Path: "/", HttpOnly: true, Secure: p.secure, SameSite: http.SameSiteLaxMode})
	return "browser|" + v
}

// csrfToken returns the token for form, setting the browser cookie if needed.
func (p *Pages) csrfToken(w http.ResponseWriter, r *http.Request, form string) string {
	seed, ok := p.csrfSeed(r)
	if !ok {
		seed = p.newBrowserSeed(w)
	}
	return p.sign(seed, form)
}

func (p *Pages) sign(seed, form string) string {
	m := hmac.New(sha256.New, p.cfg.CSRFKey)
	m.Write([]byte(seed + "|" + form))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkCSRF validates a form post; false means refuse it.
func (p *Pages) checkCSRF(r *http.Request, f url.Values, form string) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		if ref := r.Header.Get("Referer"); ref != "" {
			if u, err := url.Parse(ref); err == nil {
				origin = u.Scheme + "://" + u.Host
			} else {
				origin = "unparsable Referer"
			}
		}
	}
	if origin != "" && origin != p.origin {
		// Also what a wrong MATCHPOINT_BASE_URL looks like: say so, or every
		// sign-in fails with nothing in the log to tell why.
		audit.Event(r.Context(), slog.LevelWarn, audit.FormRefused, slog.String("form", form),
			slog.String("reason", fmt.Sprintf("the form came from %s, not from the base URL %s; if people reach the service at that address, set MATCHPOINT_BASE_URL to it", origin, p.origin)))
		return false
	}
	seed, ok := p.csrfSeed(r)
	got := f.Get("csrf_token")
	if !ok || got == "" || !hmac.Equal([]byte(got), []byte(p.sign(seed, form))) {
		audit.Event(r.Context(), slog.LevelWarn, audit.FormRefused, slog.String("form", form), slog.String("reason", "missing or stale CSRF token"))
		return false
	}
	return true
}

func (p *Pages) forbidden(w http.ResponseWriter, r *http.Request) {
	p.render(w, r, http.StatusForbidden, "error", map[string]any{
		"Title":   "This form has expired",
		"Message": "The form was not sent from this site, or it is too old. Go back, reload the page and try again.",
	})
}
