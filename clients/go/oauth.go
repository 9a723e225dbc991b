package matchpoint

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"sync"
	"time"
)

// OAuthConfig describes an OAuth client of the API. ClientSecret is empty
// for public clients (mobile, single-page apps), which rely on PKCE alone.
type OAuthConfig struct {
	ClientID     string
	ClientSecret string
	RedirectURI  string
	Scopes       []string
}

// PKCE is a code verifier and its S256 challenge (RFC 7636).
type PKCE struct {
	Verifier  string
	Challenge string
}

// NewPKCE makes a random code verifier and its challenge.
func NewPKCE() PKCE {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	v := base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(v))
	return PKCE{Verifier: v, Challenge: base64.RawURLEncoding.EncodeToString(sum[:])}
}

// NewState makes a random state value to bind the redirect to the session
// that started the flow.
func NewState() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// TokenSet is what the token endpoint grants.
type TokenSet struct {
	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Scope        string    `json:"scope,omitempty"`
	ExpiresAt    time.Time `json:"expires_at,omitzero"`
}

// AuthorizeURL is the address to send the person's browser to. Keep state
// and pkce.Verifier for the callback.
func (c *Client) AuthorizeURL(cfg OAuthConfig, state string, pkce PKCE) string {
	return c.OAuthAuthorize(&OAuthAuthorizeParams{
		ClientID: cfg.ClientID, RedirectURI: cfg.RedirectURI, ResponseType: "code",
		Scope: strings.Join(cfg.Scopes, " "), State: &state,
		CodeChallenge: &pkce.Challenge, CodeChallengeMethod: String("S256"),
	})
}

// ErrStateMismatch is returned by ParseCallback when the state differs.
var ErrStateMismatch = errors.New("matchpoint: the callback's state is not the one sent")

// ParseCallback reads the redirect the browser came back with: the code,
// after checking state; an error when the person declined or the request
// was refused.
func ParseCallback(callback *url.URL, state string) (string, error) {
	q := callback.Query()
	if e := q.Get("error"); e != "" {
		return "", &Error{Status: 400, Code: e, Detail: q.Get("error_description")}
	}
	if q.Get("state") != state {
		return "", ErrStateMismatch
	}
	return q.Get("code"), nil
}

// ExchangeCode trades an authorization code and its PKCE verifier for a
// token set.
func (c *Client) ExchangeCode(ctx context.Context, cfg OAuthConfig, code, verifier string) (TokenSet, error) {
	req := OAuthTokenRequest{GrantType: "authorization_code", Code: &code, RedirectURI: &cfg.RedirectURI, ClientID: &cfg.ClientID}
	if verifier != "" {
		req.CodeVerifier = &verifier
	}
	if cfg.ClientSecret != "" {
		req.ClientSecret = &cfg.ClientSecret
	}
	return c.token(ctx, req)
}

// RefreshToken trades a refresh token for a new token set (refresh tokens
// rotate: keep the new one).
func (c *Client) RefreshToken(ctx context.Context, cfg OAuthConfig, refreshToken string) (TokenSet, error) {
	req := OAuthTokenRequest{GrantType: "refresh_token", RefreshToken: &refreshToken, ClientID: &cfg.ClientID}
	if cfg.ClientSecret != "" {
		req.ClientSecret = &cfg.ClientSecret
	}
	return c.token(ctx, req)
}

func (c *Client) token(ctx context.Context, req OAuthTokenRequest) (TokenSet, error) {
	start := time.Now()
	res, err := c.OAuthToken(ctx, req)
	if err != nil {
		return TokenSet{}, err
	}
	ts := TokenSet{AccessToken: res.AccessToken, RefreshToken: res.RefreshToken, Scope: res.Scope}
	if res.ExpiresIn > 0 {
		ts.ExpiresAt = start.Add(time.Duration(res.ExpiresIn) * time.Second)
	}
	return ts, nil
}

// WithOAuth authenticates with a token set of cfg's client. The access token
// is refreshed shortly before it expires, and once when the API answers 401;
// concurrent calls wait for one refresh. onRefresh (may be nil) receives
// each new token set, to persist it.
func WithOAuth(cfg OAuthConfig, tokens TokenSet, onRefresh func(TokenSet)) Option {
	return func(c *Client) { c.oauth = &tokenSource{cfg: &cfg, tokens: tokens, onRefresh: onRefresh} }
}

// Tokens returns the client's current OAuth token set.
func (c *Client) Tokens() TokenSet {
	if c.oauth == nil {
		return TokenSet{}
	}
	return c.oauth.current()
}

// refreshMargin: a token this close to its expiry is refreshed first.
const refreshMargin = 30 * time.Second

type tokenSource struct {
	cfg       *OAuthConfig
	onRefresh func(TokenSet)
	mu        sync.Mutex
	tokens    TokenSet
}

func (t *tokenSource) current() TokenSet {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tokens
}

func (t *tokenSource) canRefresh() bool {
	return t.cfg != nil && t.current().RefreshToken != ""
}

// token returns an access token, refreshing it first when it expires soon.
func (t *tokenSource) token(ctx context.Context, c *Client) (string, error) {
	cur := t.current()
	if t.cfg != nil && cur.RefreshToken != "" && !cur.ExpiresAt.IsZero() && time.Until(cur.ExpiresAt) < refreshMargin {
		if err := t.refresh(ctx, c, cur.AccessToken); err != nil {
			return "", err
		}
		cur = t.current()
	}
	return cur.AccessToken, nil
}

// refresh replaces stale (the access token that failed or expired) unless
// another call has replaced it already: the lock makes concurrent callers
// refresh once, since the refresh token rotates on use.
func (t *tokenSource) refresh(ctx context.Context, c *Client, stale string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tokens.AccessToken != stale {
		return nil
	}
	ts, err := c.RefreshToken(ctx, *t.cfg, t.tokens.RefreshToken)
	if err != nil {
		return err
	}
	if ts.RefreshToken == "" {
		ts.RefreshToken = t.tokens.RefreshToken
	}
	t.tokens = ts
	if t.onRefresh != nil {
		t.onRefresh(ts)
	}
	return nil
}
