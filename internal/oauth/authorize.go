package oauth

import (
	"context"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/audit"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/secrets"
)

// AuthRequest is a validated authorization request.
type AuthRequest struct {
	Client              *Client
	RedirectURI         string
	Scopes              []string
	State               string
	CodeChallenge       string
	CodeChallengeMethod string
	Prompt              string
}

// Params returns the request as query parameters, to carry it through the
// login and consent pages.
func (r *AuthRequest) Params() url.Values {
	v := url.Values{
		"client_id":     {r.Client.ID},
		"redirect_uri":  {r.RedirectURI},
		"response_type": {"code"},
		"scope":         {auth.FormatScopes(r.Scopes)},
	}
	if r.State != "" {
		v.Set("state", r.State)
	}
	if r.CodeChallenge != "" {
		v.Set("code_challenge", r.CodeChallenge)
		v.Set("code_challenge_method", r.CodeChallengeMethod)
	}
	return v
}

// maxState bounds the state parameter: it is echoed into a redirect URL.
const maxState = 1024

// ParseAuthorize validates an authorization request. It checks the client
// and the exact redirect_uri first: a failure there is an *Error that must be
// shown to the user, never redirected. Every later failure is a
// *RedirectableError that goes back to the client.
func (s *Service) ParseAuthorize(ctx context.Context, q url.Values) (*AuthRequest, error) {
	// A repeated client_id or redirect_uri leaves no trustworthy address to
	// redirect to; the other parameters are checked once the address is known.
	for _, p := range []string{"client_id", "redirect_uri"} {
		if len(q[p]) > 1 {
			return nil, oerr(ErrInvalidRequest, "the %s parameter is repeated", p)
		}
		if !cleanString(q.Get(p)) {
			return nil, oerr(ErrInvalidRequest, "%s must be valid UTF-8 without NUL characters", p)
		}
	}
	clientID := q.Get("client_id")
	if clientID == "" {
		return nil, oerr(ErrInvalidRequest, "client_id is required")
	}
	c, err := s.Client(ctx, clientID)
	if apperr.IsKind(err, apperr.NotFound) {
		return nil, oerr(ErrInvalidClient, "unknown client_id")
	} else if err != nil {
		return nil, err
	}
	redirect := q.Get("redirect_uri")
	if redirect == "" {
		return nil, oerr(ErrInvalidRequest, "redirect_uri is required")
	}
	if !slices.Contains(c.RedirectURIs, redirect) {
		return nil, oerr(ErrInvalidRequest, "redirect_uri is not registered for this client")
	}
	r := &AuthRequest{Client: c, RedirectURI: redirect, State: q.Get("state")}
	fail := func(code, format string, args ...any) error {
		return &RedirectableError{Err: oerr(code, format, args...), RedirectURI: redirect, State: r.State}
	}
	// Every string is checked once, here (DECISIONS.md, Strings), before
	// any is echoed back or looked up.
	for p, vs := range q {
		for _, v := range vs {
			if !cleanString(p) {
				return nil, fail(ErrInvalidRequest, "a parameter name is not valid UTF-8 or holds NUL")
			}
			if !cleanString(v) {
				if p == "state" {
					r.State = "" // never echo it back
				}
				return nil, fail(ErrInvalidRequest, "the %s parameter must be valid UTF-8 without NUL characters", p)
			}
		}
	}
	for _, p := range []string{"response_type", "scope", "state", "code_challenge", "code_challenge_method", "prompt"} {
		if len(q[p]) > 1 {
			return nil, fail(ErrInvalidRequest, "the %s parameter is repeated", p)
		}
	}
	if len(r.State) > maxState {
		r.State = ""
		return nil, fail(ErrInvalidRequest, "state is longer than %d characters", maxState)
	}
	switch rt := q.Get("response_type"); rt {
	case "code":
	case "":
		return nil, fail(ErrInvalidRequest, "response_type is required and must be code")
	default:
		return nil, fail(ErrUnsupportedResponseType, "response_type must be code")
	}
	if !c.AllowsGrant(GrantAuthorizationCode) {
		return nil, fail(ErrUnauthorizedClient, "this client is not registered for the authorization_code grant")
	}
	r.Scopes = auth.ParseScopes(q.Get("scope"))
	if e := checkScopes(c, r.Scopes); e != nil {
		return nil, fail(e.Code, "%s", e.Description)
	}
	r.CodeChallenge, r.CodeChallengeMethod = q.Get("code_challenge"), q.Get("code_challenge_method")
	switch {
	case r.CodeChallenge == "" && r.CodeChallengeMethod != "":
		return nil, fail(ErrInvalidRequest, "code_challenge_method without code_challenge")
	case r.CodeChallenge == "" && c.Public:
		return nil, fail(ErrInvalidRequest, "public clients must use PKCE: send code_challenge and code_challenge_method=S256")
	case r.CodeChallenge != "" && r.CodeChallengeMethod != "S256":
		return nil, fail(ErrInvalidRequest, "code_challenge_method must be S256")
	case r.CodeChallenge != "" && !validPKCEString(r.CodeChallenge):
		return nil, fail(ErrInvalidRequest, "code_challenge must be 43 to 128 characters of base64url")
	}
	switch r.Prompt = q.Get("prompt"); r.Prompt {
	case "", "consent", "login":
	default:
		return nil, fail(ErrInvalidRequest, "prompt must be consent or login")
	}
	return r, nil
}

// NeedsConsent reports whether the user must be asked: always for a public
// client, since any app on the device can claim its redirect URI (a custom
// scheme, a loopback port) and PKCE proves only that the same app asked and
// exchanged (RFC 8252 8.6); otherwise for prompt=consent, or scopes beyond
// what this user already granted this client.
func (s *Service) NeedsConsent(ctx context.Context, userID string, r *AuthRequest) (bool, error) {
	if r.Client.Public || r.Prompt == "consent" {
		return true, nil
	}
	remembered, err := s.Remembered(ctx, userID, r)
	return !remembered, err
}

// Remembered reports whether the user already granted the client every scope
// the request asks for.
func (s *Service) Remembered(ctx context.Context, userID string, r *AuthRequest) (bool, error) {
	granted, err := s.store.ConsentScopes(ctx, userID, r.Client.ID)
	if err != nil {
		return false, err
	}
	return len(granted) > 0 && auth.Subset(r.Scopes, granted), nil
}

// Approve records the user's consent and issues an authorization code.
func (s *Service) Approve(ctx context.Context, userID string, r *AuthRequest) (string, error) {
	now := s.clock.Now()
	granted, err := s.store.ConsentScopes(ctx, userID, r.Client.ID)
	if err != nil {
		return "", err
	}
	union := slices.Clone(granted)
	for _, sc := range r.Scopes {
		if !slices.Contains(union, sc) {
			union = append(union, sc)
		}
	}
	if err := s.store.SaveConsent(ctx, userID, r.Client.ID, auth.Canonical(union), now); err != nil {
		return "", err
	}
	audit.Event(ctx, slog.LevelInfo, audit.ConsentGranted, slog.String("user_id", userID), slog.String("client_id", r.Client.ID),
		slog.String("scope", auth.FormatScopes(r.Scopes)))
	code := secrets.NewToken(secrets.AuthCode)
	err = s.store.CreateCode(ctx, &Code{
		ID: ids.New(ids.Code), Hash: secrets.Hash(code), ClientID: r.Client.ID, UserID: userID,
		RedirectURI: r.RedirectURI, Scopes: r.Scopes,
		CodeChallenge: r.CodeChallenge, CodeChallengeMethod: r.CodeChallengeMethod,
		CreatedAt: now, ExpiresAt: now.Add(CodeTTL),
	})
	if err != nil {
		return "", err
	}
	return code, nil
}

// RedirectWith returns redirectURI with params added to its query, keeping
// any query it already had.
func RedirectWith(redirectURI string, params url.Values) string {
	u, err := url.Parse(redirectURI)
	if err != nil {
		return redirectURI
	}
	q := u.Query()
	for k, vs := range params {
		for _, v := range vs {
			q.Add(k, v)
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// cleanString reports whether s is valid UTF-8 without NUL.
func cleanString(s string) bool { return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 }
