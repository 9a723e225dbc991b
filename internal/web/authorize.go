package web

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/matchpoint-api/matchpoint/internal/audit"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
)

// authorizeParams are the request parameters carried through the consent form.
var authorizeParams = []string{"client_id", "redirect_uri", "response_type", "scope", "state", "code_challenge", "code_challenge_method"}

// Authorize is GET /oauth/authorize: validate the request, make sure the
// user is signed in, and ask for consent unless it was already given to a
// confidential client (a public one is always asked: oauth.NeedsConsent).
// Every redirect back to the client carries iss (RFC 9207), so a client
// talking to several servers knows which one answered.
func (p *Pages) Authorize() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.authorize(w, r, r.URL.Query(), http.StatusFound)
	})
}

func (p *Pages) authorize(w http.ResponseWriter, r *http.Request, q url.Values, redirectStatus int) {
	req, err := p.cfg.OAuth.ParseAuthorize(r.Context(), q)
	if err != nil {
		p.authorizeError(w, r, err, redirectStatus)
		return
	}
	userID, err := p.currentUser(r)
	if err != nil {
		p.serverError(w, r, err)
		return
	}
	if userID == "" || req.Prompt == "login" {
		// Back to this request after signing in; without prompt=login, or the
		// user would be asked to sign in forever.
		back := req.Params()
		if req.Prompt == "consent" {
			back.Set("prompt", "consent")
		}
		http.Redirect(w, r, "/login?"+url.Values{"return_to": {"/oauth/authorize?" + back.Encode()}}.Encode(), http.StatusFound)
		return
	}
	need, err := p.cfg.OAuth.NeedsConsent(r.Context(), userID, req)
	if err != nil {
		p.serverError(w, r, err)
		return
	}
	if !need {
		p.issueCode(w, r, userID, req, redirectStatus)
		return
	}
	u, err := p.cfg.Users.Get(r.Context(), userID)
	if err != nil {
		p.serverError(w, r, err)
		return
	}
	remembered, err := p.cfg.OAuth.Remembered(r.Context(), userID, req)
	if err != nil {
		p.serverError(w, r, err)
		return
	}
	hidden := req.Params()
	var fields []map[string]string
	for _, k := range authorizeParams {
		if v := hidden.Get(k); v != "" {
			fields = append(fields, map[string]string{"Name": k, "Value": v})
		}
	}
	redirectHost := req.RedirectURI
	if u, err := url.Parse(req.RedirectURI); err == nil && u.Host != "" {
		redirectHost = u.Host
	}
	p.render(w, r, http.StatusOK, "consent", map[string]any{
		"Title": "Authorize " + req.Client.Name, "Client": req.Client.Name, "Username": u.Username,
		"Scopes": consentScopes(req.Scopes, req.Client.FirstParty), "ThirdParty": !req.Client.FirstParty,
		"Remembered": remembered, "Public": req.Client.Public, "Fields": fields, "RedirectHost": redirectHost,
		"CSRF": p.csrfToken(w, r, "authorize"), "LogoutCSRF": p.csrfToken(w, r, "logout"),
	})
}

// Decide is POST /oauth/authorize: the consent form's Allow or Deny.
func (p *Pages) Decide() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := p.postedForm(w, r, "authorize", nil)
		if !ok {
			return
		}
		q := url.Values{}
		for _, k := range authorizeParams {
			if v := f.Get(k); v != "" {
				q.Set(k, v)
			}
		}
		req, err := p.cfg.OAuth.ParseAuthorize(r.Context(), q)
		if err != nil {
			p.authorizeError(w, r, err, http.StatusSeeOther)
			return
		}
		userID, err := p.currentUser(r)
		if err != nil {
			p.serverError(w, r, err)
			return
		}
		if userID == "" {
			http.Redirect(w, r, "/login?"+url.Values{"return_to": {"/oauth/authorize?" + req.Params().Encode()}}.Encode(), http.StatusSeeOther)
			return
		}
		switch f.Get("decision") {
		case "allow":
			p.issueCode(w, r, userID, req, http.StatusSeeOther)
		case "deny":
			audit.Event(r.Context(), slog.LevelInfo, audit.ConsentDenied, slog.String("user_id", userID), slog.String("client_id", req.Client.ID))
			p.redirectError(w, r, req.RedirectURI, req.State, &oauth.Error{Code: oauth.ErrAccessDenied, Description: "the user denied the request"}, http.StatusSeeOther)
		default:
			p.render(w, r, http.StatusBadRequest, "error", map[string]any{"Title": "Choose Allow or Deny", "Message": "The form was sent without a decision."})
		}
	})
}

func (p *Pages) issueCode(w http.ResponseWriter, r *http.Request, userID string, req *oauth.AuthRequest, status int) {
	code, err := p.cfg.OAuth.Approve(r.Context(), userID, req)
	if err != nil {
		p.serverError(w, r, err)
		return
	}
	params := url.Values{"code": {code}, "iss": {p.cfg.BaseURL}}
	if req.State != "" {
		params.Set("state", req.State)
	}
	http.Redirect(w, r, oauth.RedirectWith(req.RedirectURI, params), status)
}

func (p *Pages) redirectError(w http.ResponseWriter, r *http.Request, redirectURI, state string, e *oauth.Error, status int) {
	params := url.Values{"error": {e.Code}, "error_description": {e.Description}, "error_uri": {ErrorLink(p.cfg.DocsURL, e.Code)},
		"iss": {p.cfg.BaseURL}}
	if state != "" {
		params.Set("state", state)
	}
	http.Redirect(w, r, oauth.RedirectWith(redirectURI, params), status)
}

// authorizeError redirects errors the client may see and shows the others
// (bad client or redirect_uri) to the user: never redirect to an unverified
// address. Clients asking for JSON get the document's error body.
func (p *Pages) authorizeError(w http.ResponseWriter, r *http.Request, err error, status int) {
	var re *oauth.RedirectableError
	if errors.As(err, &re) {
		p.redirectError(w, r, re.RedirectURI, re.State, re.Err, status)
		return
	}
	var oe *oauth.Error
	if !errors.As(err, &oe) {
		p.serverError(w, r, err)
		return
	}
	if accept := r.Header.Get("Accept"); strings.Contains(accept, "application/json") && !strings.Contains(accept, "text/html") {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{
			"error": oe.Code, "error_description": oe.Description, "error_uri": ErrorLink(p.cfg.DocsURL, oe.Code),
		})
		return
	}
	p.render(w, r, http.StatusBadRequest, "error", map[string]any{
		"Title": "This sign-in link is not valid", "Code": oe.Code, "Message": oe.Description,
		"Detail":  "The application that sent you here is misconfigured, or the link was altered. You have not been signed in to it.",
		"DocsURL": ErrorLink(p.cfg.DocsURL, oe.Code),
	})
}
