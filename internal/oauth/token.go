package oauth

import (
	"context"
	"crypto/subtle"
	"log/slog"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/audit"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/secrets"
)

// TokenSet is the token endpoint's answer: exactly the fields of the API
// document's "OAuth token set".
type TokenSet struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Scope        string `json:"scope"`
}

// AuthenticateClient checks client credentials. A public client presents
// only its id; a confidential one must present its secret.
func (s *Service) AuthenticateClient(ctx context.Context, id, secret string) (*Client, error) {
	bad := oerr(ErrInvalidClient, "client authentication failed")
	if id == "" {
		return nil, oerr(ErrInvalidClient, "client_id is required")
	}
	c, err := s.Client(ctx, id)
	if apperr.IsKind(err, apperr.NotFound) {
		return nil, bad
	} else if err != nil {
		return nil, err
	}
	if c.Public {
		if secret != "" {
			return nil, oerr(ErrInvalidClient, "public clients have no secret")
		}
		return c, nil
	}
	if secret == "" || !secrets.WellFormed(secrets.ClientSecret, secret) ||
		subtle.ConstantTimeCompare([]byte(secrets.Hash(secret)), []byte(c.SecretHash)) != 1 {
		return nil, bad
	}
	return c, nil
}

// issue makes an access token, and a refresh token when the client may
// refresh, for a grant.
func (s *Service) issue(c *Client, grantID string, scopes []string, now time.Time) (*TokenSet, *AccessToken, *RefreshToken) {
	at := secrets.NewToken(secrets.AccessToken)
	set := &TokenSet{AccessToken: at, TokenType: "Bearer", ExpiresIn: int(AccessTokenTTL / time.Second), Scope: auth.FormatScopes(scopes)}
	access := &AccessToken{ID: ids.New(ids.Token), Hash: secrets.Hash(at), GrantID: grantID, Scopes: scopes,
		CreatedAt: now, ExpiresAt: now.Add(AccessTokenTTL)}
	var refresh *RefreshToken
	if c.AllowsGrant(GrantRefreshToken) {
		rt := secrets.NewToken(secrets.RefreshToken)
		set.RefreshToken = rt
		refresh = &RefreshToken{ID: ids.New(ids.Token), Hash: secrets.Hash(rt), GrantID: grantID,
			CreatedAt: now, ExpiresAt: now.Add(RefreshTokenTTL)}
	}
	return set, access, refresh
}

// ExchangeCode is the authorization_code grant.
func (s *Service) ExchangeCode(ctx context.Context, c *Client, code, redirectURI, verifier string) (*TokenSet, error) {
	if !c.AllowsGrant(GrantAuthorizationCode) {
		return nil, oerr(ErrUnauthorizedClient, "this client is not registered for the authorization_code grant")
	}
	if code == "" {
		return nil, oerr(ErrInvalidRequest, "code is required")
	}
	if redirectURI == "" {
		return nil, oerr(ErrInvalidRequest, "redirect_uri is required")
	}
	invalid := oerr(ErrInvalidGrant, "the authorization code is invalid")
	if !secrets.WellFormed(secrets.AuthCode, code) {
		return nil, invalid
	}
	cd, err := s.store.CodeByHash(ctx, secrets.Hash(code))
	if apperr.IsKind(err, apperr.NotFound) {
		return nil, invalid
	} else if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	if cd.ClientID != c.ID {
		return nil, oerr(ErrInvalidGrant, "the authorization code was issued to another client")
	}
	if cd.UsedAt != nil {
		// A second use means the code leaked: revoke all it produced (RFC 6749 4.1.2).
		audit.Event(ctx, slog.LevelWarn, audit.CodeReused, slog.String("client_id", c.ID), slog.String("user_id", cd.UserID),
			slog.String("grant_id", cd.GrantID))
		if err := s.store.RevokeGrant(ctx, cd.GrantID, now); err != nil {
			return nil, err
		}
		return nil, oerr(ErrInvalidGrant, "the authorization code was already used; tokens issued from it are revoked")
	}
	if !now.Before(cd.ExpiresAt) {
		return nil, oerr(ErrInvalidGrant, "the authorization code has expired")
	}
	if cd.RedirectURI != redirectURI {
		return nil, oerr(ErrInvalidGrant, "redirect_uri does not match the one of the authorization request")
	}
	switch {
	case cd.CodeChallenge != "" && verifier == "":
		return nil, oerr(ErrInvalidGrant, "code_verifier is required: the authorization request used PKCE")
	case cd.CodeChallenge != "" && !verifyPKCE(cd.CodeChallenge, verifier):
		return nil, oerr(ErrInvalidGrant, "code_verifier does not match the code_challenge")
	case cd.CodeChallenge == "" && verifier != "":
		return nil, oerr(ErrInvalidGrant, "code_verifier sent, but the authorization request had no code_challenge")
	}
	if e := checkScopes(c, cd.Scopes); e != nil { // the client's registration may have changed since
		return nil, e
	}
	g := &Grant{ID: ids.New(ids.Grant), ClientID: c.ID, UserID: cd.UserID, Scopes: cd.Scopes, CreatedAt: now}
	set, access, refresh := s.issue(c, g.ID, cd.Scopes, now)
	ok, err := s.store.IssueFromCode(ctx, cd.ID, now, g, access, refresh)
	if err != nil {
		return nil, err
	}
	if !ok {
		// Lost a race with another exchange of the same code: that is reuse too.
		audit.Event(ctx, slog.LevelWarn, audit.CodeReused, slog.String("client_id", c.ID), slog.String("user_id", cd.UserID))
		if again, err := s.store.CodeByHash(ctx, cd.Hash); err == nil && again.GrantID != "" {
			if err := s.store.RevokeGrant(ctx, again.GrantID, now); err != nil {
				return nil, err
			}
		}
		return nil, oerr(ErrInvalidGrant, "the authorization code was already used; tokens issued from it are revoked")
	}
	return set, nil
}

// Refresh is the refresh_token grant, with rotation: every use returns a new
// refresh token, and presenting a used one revokes the whole family.
func (s *Service) Refresh(ctx context.Context, c *Client, token, scope string, scopeSent bool) (*TokenSet, error) {
	if !c.AllowsGrant(GrantRefreshToken) {
		return nil, oerr(ErrUnauthorizedClient, "this client is not registered for the refresh_token grant")
	}
	if token == "" {
		return nil, oerr(ErrInvalidRequest, "refresh_token is required")
	}
	invalid := oerr(ErrInvalidGrant, "the refresh token is invalid")
	if !secrets.WellFormed(secrets.RefreshToken, token) {
		return nil, invalid
	}
	ri, err := s.store.RefreshByHash(ctx, secrets.Hash(token))
	if apperr.IsKind(err, apperr.NotFound) {
		return nil, invalid
	} else if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	if ri.Grant.ClientID != c.ID {
		return nil, oerr(ErrInvalidGrant, "the refresh token was issued to another client")
	}
	who := []slog.Attr{slog.String("client_id", c.ID), slog.String("user_id", ri.Grant.UserID), slog.String("grant_id", ri.Grant.ID)}
	if ri.Grant.RevokedAt != nil {
		audit.Event(ctx, slog.LevelWarn, audit.RevokedCredentialUsed, append(who, slog.String("credential", "refresh_token"))...)
		return nil, oerr(ErrInvalidGrant, "the refresh token has been revoked")
	}
	if ri.Token.UsedAt != nil {
		audit.Event(ctx, slog.LevelWarn, audit.RefreshTokenReused, who...)
		if err := s.store.RevokeGrant(ctx, ri.Grant.ID, now); err != nil {
			return nil, err
		}
		return nil, oerr(ErrInvalidGrant, "the refresh token was already used; every token of this grant is revoked")
	}
	if !now.Before(ri.Token.ExpiresAt) {
		return nil, oerr(ErrInvalidGrant, "the refresh token has expired")
	}
	if ri.Suspension.ActiveAt(now) {
		// The token stays unused: it works again when the suspension ends.
		return nil, oerr(ErrInvalidGrant, "the account is suspended: %s", ri.Suspension.Err().Message)
	}
	scopes := ri.Grant.Scopes
	if scopeSent {
		asked := auth.ParseScopes(scope)
		if len(asked) == 0 {
			return nil, oerr(ErrInvalidScope, "scope is empty")
		}
		if !auth.Subset(asked, ri.Grant.Scopes) {
			return nil, oerr(ErrInvalidScope, "the requested scope is broader than the original grant (%s)", auth.FormatScopes(ri.Grant.Scopes))
		}
		scopes = asked
	}
	scopes = auth.ForTier(scopes, c.OwnerTier)
	set, access, refresh := s.issue(c, ri.Grant.ID, scopes, now)
	ok, err := s.store.Rotate(ctx, ri.Token.ID, now, access, refresh)
	if err != nil {
		return nil, err
	}
	if !ok {
		audit.Event(ctx, slog.LevelWarn, audit.RefreshTokenReused, who...)
		if err := s.store.RevokeGrant(ctx, ri.Grant.ID, now); err != nil {
			return nil, err
		}
		return nil, oerr(ErrInvalidGrant, "the refresh token was already used; every token of this grant is revoked")
	}
	return set, nil
}

// Revoke is RFC 7009. Revoking a refresh token revokes its whole grant;
// revoking an access token revokes that token. Unknown tokens and tokens of
// other clients are ignored without saying so, as the RFC allows, so the
// endpoint cannot be used to probe for tokens.
func (s *Service) Revoke(ctx context.Context, c *Client, token string) error {
	now := s.clock.Now()
	switch {
	case secrets.WellFormed(secrets.AccessToken, token):
		ti, err := s.store.AccessTokenByHash(ctx, secrets.Hash(token))
		if apperr.IsKind(err, apperr.NotFound) {
			return nil
		} else if err != nil {
			return err
		}
		if ti.Grant.ClientID == c.ID {
			return s.store.RevokeAccessToken(ctx, ti.Token.ID, now)
		}
	case secrets.WellFormed(secrets.RefreshToken, token):
		ri, err := s.store.RefreshByHash(ctx, secrets.Hash(token))
		if apperr.IsKind(err, apperr.NotFound) {
			return nil
		} else if err != nil {
			return err
		}
		if ri.Grant.ClientID == c.ID {
			return s.store.RevokeGrant(ctx, ri.Grant.ID, now)
		}
	}
	return nil
}

// Introspection is RFC 7662's answer.
type Introspection struct {
	Active    bool   `json:"active"`
	Scope     string `json:"scope,omitempty"`
	ClientID  string `json:"client_id,omitempty"`
	Username  string `json:"username,omitempty"`
	TokenType string `json:"token_type,omitempty"`
	Exp       int64  `json:"exp,omitempty"`
	Iat       int64  `json:"iat,omitempty"`
	Sub       string `json:"sub,omitempty"`
}

// Introspect is RFC 7662, for tokens issued to the calling client only: a
// client learns nothing about other clients' tokens.
func (s *Service) Introspect(ctx context.Context, c *Client, token string) (*Introspection, error) {
	inactive := &Introspection{Active: false}
	now := s.clock.Now()
	switch {
	case secrets.WellFormed(secrets.AccessToken, token):
		ti, err := s.store.AccessTokenByHash(ctx, secrets.Hash(token))
		if apperr.IsKind(err, apperr.NotFound) {
			return inactive, nil
		} else if err != nil {
			return nil, err
		}
		if ti.Grant.ClientID != c.ID || liveAccess(ti, now) != "" {
			return inactive, nil
		}
		return &Introspection{Active: true, Scope: auth.FormatScopes(auth.ForTier(ti.Token.Scopes, ti.OwnerTier)),
			ClientID: c.ID, Username: ti.Username, TokenType: "Bearer",
			Exp: ti.Token.ExpiresAt.Unix(), Iat: ti.Token.CreatedAt.Unix(), Sub: ti.Grant.UserID}, nil
	case secrets.WellFormed(secrets.RefreshToken, token):
		ri, err := s.store.RefreshByHash(ctx, secrets.Hash(token))
		if apperr.IsKind(err, apperr.NotFound) {
			return inactive, nil
		} else if err != nil {
			return nil, err
		}
		if ri.Grant.ClientID != c.ID || ri.Grant.RevokedAt != nil || ri.Token.UsedAt != nil || !now.Before(ri.Token.ExpiresAt) {
			return inactive, nil
		}
		return &Introspection{Active: true, Scope: auth.FormatScopes(ri.Grant.Scopes), ClientID: c.ID, Username: ri.Username,
			TokenType: "refresh_token", Exp: ri.Token.ExpiresAt.Unix(), Iat: ri.Token.CreatedAt.Unix(), Sub: ri.Grant.UserID}, nil
	}
	return inactive, nil
}

// liveAccess says why an access token cannot be used, or "" if it can.
func liveAccess(ti *TokenInfo, now time.Time) string {
	switch {
	case ti.Token.RevokedAt != nil, ti.Grant.RevokedAt != nil, ti.ClientGone, ti.UserGone:
		return "The access token has been revoked."
	case !now.Before(ti.Token.ExpiresAt):
		return expiredAccess
	}
	return ""
}

const expiredAccess = "The access token expired."

// AuthenticateAccessToken resolves a bearer access token to its principal.
func (s *Service) AuthenticateAccessToken(ctx context.Context, token string) (*auth.Principal, error) {
	invalid := &apperr.Error{Kind: apperr.Unauthenticated, Code: "invalid_token", Message: "The access token is invalid."}
	if !secrets.WellFormed(secrets.AccessToken, token) {
		return nil, invalid
	}
	ti, err := s.store.AccessTokenByHash(ctx, secrets.Hash(token))
	if apperr.IsKind(err, apperr.NotFound) {
		return nil, invalid
	} else if err != nil {
		return nil, err
	}
	if why := liveAccess(ti, s.clock.Now()); why != "" {
		if why != expiredAccess {
			audit.Event(ctx, slog.LevelWarn, audit.RevokedCredentialUsed, slog.String("credential", "access_token"),
				slog.String("client_id", ti.Grant.ClientID), slog.String("user_id", ti.Grant.UserID), slog.String("grant_id", ti.Grant.ID))
		}
		return nil, &apperr.Error{Kind: apperr.Unauthenticated, Code: "invalid_token", Message: why}
	}
	p := &auth.Principal{
		UserID: ti.Grant.UserID, Role: ti.UserRole, Scopes: auth.ForTier(ti.Token.Scopes, ti.OwnerTier),
		ClientID: ti.Grant.ClientID, GrantID: ti.Grant.ID, FirstParty: ti.OwnerRole == auth.RoleSystem,
		AccountID: ti.OwnerID, Tier: ti.OwnerTier, HourlyLimit: auth.HourlyLimit(ti.OwnerTier, ti.OwnerLimit),
		Suspension: ti.Suspension,
	}
	if p.FirstParty {
		p.AccountID, p.Tier, p.HourlyLimit = ti.Grant.UserID, ti.UserTier, auth.HourlyLimit(ti.UserTier, ti.UserLimit)
	}
	return p, nil
}
