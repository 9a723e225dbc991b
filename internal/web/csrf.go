package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
)

// CSRF defence, in three layers: SameSite=Lax cookies; a per-form token
// (HMAC of a random per-browser cookie and the form's name, under a key
// shared by all nodes) that a cross-site page cannot read or compute; and an
// Origin (or Referer) check on every form post.
const csrfCookie = "mp_csrf"

// csrfToken returns the token for form, setting the browser cookie if needed.
func (p *Pages) csrfToken(w http.ResponseWriter, r *http.Request, form string) string {
	seed := ""
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) >= 32 {
		seed = c.Value
	} else {
		var b [32]byte
		_, _ = rand.Read(b[:])
		seed = base64.RawURLEncoding.EncodeToString(b[:])
		http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: seed, Path: "/", HttpOnly: true, Secure: p.secure, SameSite: http.SameSiteLaxMode})
	}
	return p.sign(seed, form)
}

func (p *Pages) sign(seed, form string) string {
	m := hmac.New(sha256.New, p.cfg.CSRFKey)
	m.Write([]byte(seed + "|" + form))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkCSRF validates a form post; false means refuse it.
func (p *Pages) checkCSRF(r *http.Request, form string) bool {
	if o := r.Header.Get("Origin"); o != "" {
		if o != p.origin {
			return false
		}
	} else if ref := r.Header.Get("Referer"); ref != "" {
		u, err := url.Parse(ref)
		if err != nil || u.Scheme+"://"+u.Host != p.origin {
			return false
		}
	}
	c, err := r.Cookie(csrfCookie)
	if err != nil {
		return false
	}
	got := r.PostFormValue("csrf_token")
	return got != "" && hmac.Equal([]byte(got), []byte(p.sign(c.Value, form)))
}

func (p *Pages) forbidden(w http.ResponseWriter, r *http.Request) {
	p.render(w, r, http.StatusForbidden, "error", map[string]any{
		"Title":   "This form has expired",
		"Message": "The form was not sent from this site, or it is too old. Go back, reload the page and try again.",
	})
}
