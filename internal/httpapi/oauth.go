package httpapi

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/oauth"
	"github.com/matchpoint-api/matchpoint/internal/web"
)

// oauthErrorBody is the error body of the API document, section 7.
type oauthErrorBody struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
	ErrorURI         string `json:"error_uri"`
}

// maxFormBytes bounds token-endpoint bodies: a real one is a few hundred bytes.
const maxFormBytes = 64 << 10

// tokenRequest is a parsed, client-authenticated request to a token endpoint.
type tokenRequest struct {
	form      url.Values
	clientID  string
	secret    string
	viaBasic  bool
	scopeSent bool
}

// parseTokenRequest reads an OAuth endpoint's form body and client
// credentials (client_secret_post, or HTTP Basic per RFC 6749 2.3.1). It
// reads the body only: parameters in the query string are not credentials.
func parseTokenRequest(contentType, authorization string, body []byte) (*tokenRequest, *oauth.Error) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, &oauth.Error{Code: oauth.ErrInvalidRequest, Description: "the body must be application/x-www-form-urlencoded"}
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, &oauth.Error{Code: oauth.ErrInvalidRequest, Description: "the body is not valid form encoding"}
	}
	for k, v := range form {
		if len(v) > 1 {
			return nil, &oauth.Error{Code: oauth.ErrInvalidRequest, Description: "the " + safeName(k) + " parameter is repeated"}
		}
		if !cleanString(k) || !cleanString(v[0]) {
			return nil, &oauth.Error{Code: oauth.ErrInvalidRequest, Description: "the " + safeName(k) + " parameter must be valid UTF-8 without NUL characters"}
		}
	}
	tr := &tokenRequest{form: form, clientID: form.Get("client_id"), secret: form.Get("client_secret")}
	_, tr.scopeSent = form["scope"]
	if authorization != "" {
		id, secret, ok := parseBasic(authorization)
		if !ok || !cleanString(id) || !cleanString(secret) {
			return nil, &oauth.Error{Code: oauth.ErrInvalidClient, Description: "the Authorization header must be Basic client credentials"}
		}
		if tr.secret != "" {
			return nil, &oauth.Error{Code: oauth.ErrInvalidRequest, Description: "use one client authentication method, not both Basic and client_secret"}
		}
		if tr.clientID != "" && tr.clientID != id {
			return nil, &oauth.Error{Code: oauth.ErrInvalidClient, Description: "client_id does not match the Basic credentials"}
		}
		tr.clientID, tr.secret, tr.viaBasic = id, secret, true
	}
	return tr, nil
}

// token is the token parameter of revocation and introspection.
func (tr *tokenRequest) token() (string, error) {
	if tok := tr.form.Get("token"); tok != "" {
		return tok, nil
	}
	return "", &oauth.Error{Code: oauth.ErrInvalidRequest, Description: "token is required"}
}

// parseBasic decodes Basic credentials, whose parts are form-encoded
// (RFC 6749 2.3.1) before base64.
func parseBasic(h string) (string, string, bool) {
	r := http.Request{Header: http.Header{"Authorization": {h}}}
	id, secret, ok := r.BasicAuth()
	if !ok {
		return "", "", false
	}
	id, err1 := url.QueryUnescape(id)
	secret, err2 := url.QueryUnescape(secret)
	return id, secret, err1 == nil && err2 == nil
}

// oauthEndpoint wraps the three client endpoints: it reads and authenticates
// the request, and renders any error in the document's error body.
func (s *server) oauthEndpoint(serve func(w http.ResponseWriter, r *http.Request, tr *tokenRequest, c *oauth.Client) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Pragma", "no-cache")
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxFormBytes))
		if err != nil {
			s.oauthError(w, r, &oauth.Error{Code: oauth.ErrInvalidRequest, Description: "the body is too large or unreadable"}, false)
			return
		}
		tr, oe := parseTokenRequest(r.Header.Get("Content-Type"), r.Header.Get("Authorization"), body)
		if oe != nil {
			s.oauthError(w, r, oe, r.Header.Get("Authorization") != "")
			return
		}
		c, err := s.oauth.AuthenticateClient(r.Context(), tr.clientID, tr.secret)
		if err == nil {
			err = serve(w, r, tr, c)
		}
		if err != nil {
			var oe *oauth.Error
			if !errors.As(err, &oe) {
				Logger(r.Context()).ErrorContext(r.Context(), "oauth endpoint", "error", err.Error())
				oe = &oauth.Error{Code: oauth.ErrServerError, Description: "the server met an unexpected error; retry later"}
			}
			s.oauthError(w, r, oe, tr.viaBasic)
		}
	})
}

// oauthError writes the error body: 401 for invalid_client (with a Basic
// challenge when the client tried Basic), 500 for server_error, else 400.
func (s *server) oauthError(w http.ResponseWriter, r *http.Request, e *oauth.Error, basic bool) {
	status := oauth.Status(e.Code)
	if status == http.StatusUnauthorized && basic {
		w.Header().Set("WWW-Authenticate", `Basic realm="matchpoint"`)
	}
	writeJSON(w, status, oauthErrorBody{Error: e.Code, ErrorDescription: e.Description, ErrorURI: web.ErrorLink(s.problems.docsURL, e.Code)})
}

// tokenEndpoint is POST /oauth/token (API document 4.1).
func (s *server) tokenEndpoint() http.Handler {
	return s.oauthEndpoint(func(w http.ResponseWriter, r *http.Request, tr *tokenRequest, c *oauth.Client) error {
		var set *oauth.TokenSet
		var err error
		switch gt := tr.form.Get("grant_type"); gt {
		case oauth.GrantAuthorizationCode:
			set, err = s.oauth.ExchangeCode(r.Context(), c, tr.form.Get("code"), tr.form.Get("redirect_uri"), tr.form.Get("code_verifier"))
		case oauth.GrantRefreshToken:
			set, err = s.oauth.Refresh(r.Context(), c, tr.form.Get("refresh_token"), tr.form.Get("scope"), tr.scopeSent)
		case "":
			err = &oauth.Error{Code: oauth.ErrInvalidRequest, Description: "grant_type is required"}
		default:
			err = &oauth.Error{Code: oauth.ErrUnsupportedGrantType, Description: "grant_type must be authorization_code or refresh_token"}
		}
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, set)
		return nil
	})
}

// revokeEndpoint is POST /oauth/revoke (RFC 7009).
func (s *server) revokeEndpoint() http.Handler {
	return s.oauthEndpoint(func(w http.ResponseWriter, r *http.Request, tr *tokenRequest, c *oauth.Client) error {
		tok, err := tr.token()
		if err != nil {
			return err
		}
		if err := s.oauth.Revoke(r.Context(), c, tok); err != nil {
			return err
		}
		w.WriteHeader(http.StatusOK)
		return nil
	})
}

// introspectEndpoint is POST /oauth/introspect (RFC 7662).
func (s *server) introspectEndpoint() http.Handler {
	return s.oauthEndpoint(func(w http.ResponseWriter, r *http.Request, tr *tokenRequest, c *oauth.Client) error {
		tok, err := tr.token()
		if err != nil {
			return err
		}
		res, err := s.oauth.Introspect(r.Context(), c, tok)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, res)
		return nil
	})
}

// oauthNotFound answers other /oauth/ requests in the OAuth error shape:
// 405 with Allow when mux serves the path under other methods, else 404.
func (s *server) oauthNotFound(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var allowed []string
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, pattern := mux.Handler(probe); m != r.Method && strings.HasPrefix(pattern, m+" ") {
				allowed = append(allowed, m)
			}
		}
		status, desc := http.StatusNotFound, "no OAuth endpoint at "+r.Method+" "+r.URL.Path
		if len(allowed) > 0 {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			status, desc = http.StatusMethodNotAllowed, r.URL.Path+" takes "+strings.Join(allowed, ", ")+", not "+r.Method
		}
		writeJSON(w, status, oauthErrorBody{Error: oauth.ErrInvalidRequest, ErrorDescription: desc,
			ErrorURI: web.ErrorLink(s.problems.docsURL, oauth.ErrInvalidRequest)})
	})
}

// documentOAuth adds the OAuth endpoints, which are not Huma operations, to
// the OpenAPI document.
func (s *server) documentOAuth() {
	form := func(props map[string]*huma.Schema, required ...string) *huma.RequestBody {
		return &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
			"application/x-www-form-urlencoded": {Schema: &huma.Schema{Type: "object", Properties: props, Required: required}},
		}}
	}
	str := func(desc string) *huma.Schema { return &huma.Schema{Type: "string", Description: desc} }
	errResp := &huma.Response{Description: "OAuth error (401 for invalid_client)", Content: map[string]*huma.MediaType{
		"application/json": {Schema: &huma.Schema{Type: "object", Properties: map[string]*huma.Schema{
			"error": str("error code"), "error_description": str("human-readable"), "error_uri": str("address of the error reference"),
		}, Required: []string{"error", "error_description", "error_uri"}}},
	}}
	o := s.api.OpenAPI()
	o.AddOperation(&huma.Operation{
		OperationID: "oauth-authorize", Method: http.MethodGet, Path: "/oauth/authorize", Tags: []string{"OAuth 2.0"}, Metadata: public(),
		Summary:     "Ask the user to authorize a client",
		Description: "Browser redirect. Checks client_id and the exact redirect_uri first (errors there are shown to the user, never redirected), then signs the user in and asks for consent. Redirects to redirect_uri with code, state and iss, or with error, error_description, error_uri, state and iss. PKCE (S256) is required for public clients, which are asked for consent every time. prompt=consent asks again even if consent was given.",
		Parameters: []*huma.Param{
			{Name: "client_id", In: "query", Required: true, Schema: str("")},
			{Name: "redirect_uri", In: "query", Required: true, Schema: str("exactly as registered")},
			{Name: "response_type", In: "query", Required: true, Schema: &huma.Schema{Type: "string", Enum: []any{"code"}}},
			{Name: "scope", In: "query", Required: true, Schema: str("space-separated scopes")},
			{Name: "state", In: "query", Schema: str("returned unchanged")},
			{Name: "code_challenge", In: "query", Schema: str("BASE64URL(SHA256(code_verifier))")},
			{Name: "code_challenge_method", In: "query", Schema: &huma.Schema{Type: "string", Enum: []any{"S256"}}},
			{Name: "prompt", In: "query", Schema: &huma.Schema{Type: "string", Enum: []any{"consent", "login"}}},
		},
		Responses: map[string]*huma.Response{"302": {Description: "Redirect to the login page, or back to the client"}, "400": {Description: "Unknown client or unregistered redirect_uri (HTML page)"}},
	})
	o.AddOperation(&huma.Operation{
		OperationID: "oauth-authorization-server-metadata", Method: http.MethodGet, Path: "/.well-known/oauth-authorization-server", Tags: []string{"OAuth 2.0"}, Metadata: public(),
		Summary:     "Authorization server metadata (RFC 8414)",
		Description: "Where the OAuth endpoints are and what they support, for clients that configure themselves (AppAuth and the like). The issuer is the base URL; authorization responses carry it as iss (RFC 9207).",
		Responses: map[string]*huma.Response{"200": {Description: "The metadata document", Content: map[string]*huma.MediaType{
			"application/json": {Schema: &huma.Schema{Type: "object", Properties: map[string]*huma.Schema{
				"issuer": str(""), "authorization_endpoint": str(""), "token_endpoint": str(""), "revocation_endpoint": str(""),
				"introspection_endpoint": str(""), "scopes_supported": {Type: "array", Items: str("")},
				"authorization_response_iss_parameter_supported": {Type: "boolean"},
			}}}}}},
	})
	o.AddOperation(&huma.Operation{
		OperationID: "oauth-token", Method: http.MethodPost, Path: "/oauth/token", Tags: []string{"OAuth 2.0"}, Metadata: public(),
		Summary:     "Exchange a code or a refresh token for tokens",
		Description: "Client authentication by client_secret in the body or HTTP Basic. Refresh tokens rotate: each use returns a new one, and reusing an old one revokes every token of the grant. A refresh may narrow the scope, never widen it.",
		RequestBody: form(map[string]*huma.Schema{
			"grant_type":    {Type: "string", Enum: []any{"authorization_code", "refresh_token"}},
			"client_id":     str(""),
			"client_secret": str("confidential clients"),
			"code":          str("authorization_code grant"),
			"redirect_uri":  str("authorization_code grant; as in the authorization request"),
			"code_verifier": str("authorization_code grant with PKCE"),
			"refresh_token": str("refresh_token grant"),
			"scope":         str("refresh_token grant; at most the original scope"),
		}, "grant_type"),
		Responses: map[string]*huma.Response{
			"200": {Description: "Token set", Content: map[string]*huma.MediaType{"application/json": {Schema: &huma.Schema{Type: "object", Properties: map[string]*huma.Schema{
				"access_token": str(""), "token_type": {Type: "string", Enum: []any{"Bearer"}}, "expires_in": {Type: "integer", Examples: []any{3600}},
				"refresh_token": str(""), "scope": str("space-separated"),
			}}}}},
			"400": errResp, "401": errResp,
		},
	})
	o.AddOperation(&huma.Operation{
		OperationID: "oauth-revoke", Method: http.MethodPost, Path: "/oauth/revoke", Tags: []string{"OAuth 2.0"}, Metadata: public(),
		Summary:     "Revoke a token (RFC 7009)",
		Description: "Revoking a refresh token revokes its whole grant; revoking an access token revokes that token. Answers 200 for unknown tokens too.",
		RequestBody: form(map[string]*huma.Schema{"token": str(""), "token_type_hint": str("ignored"), "client_id": str(""), "client_secret": str("")}, "token"),
		Responses:   map[string]*huma.Response{"200": {Description: "Revoked, or nothing to revoke"}, "400": errResp, "401": errResp},
	})
	o.AddOperation(&huma.Operation{
		OperationID: "oauth-introspect", Method: http.MethodPost, Path: "/oauth/introspect", Tags: []string{"OAuth 2.0"}, Metadata: public(),
		Summary:     "Describe a token (RFC 7662)",
		Description: "A client may introspect only tokens issued to it; any other token is reported inactive.",
		RequestBody: form(map[string]*huma.Schema{"token": str(""), "client_id": str(""), "client_secret": str("")}, "token"),
		Responses: map[string]*huma.Response{"200": {Description: "active, scope, client_id, username, token_type, exp, iat, sub", Content: map[string]*huma.MediaType{
			"application/json": {Schema: &huma.Schema{Type: "object", Properties: map[string]*huma.Schema{"active": {Type: "boolean"}}}}}},
			"400": errResp, "401": errResp},
	})
}
