package oauth

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/secrets"
)

// Lifetimes (API document section 5.1 and DECISIONS.md).
const (
	AccessTokenTTL  = 3600 * time.Second
	RefreshTokenTTL = 30 * 24 * time.Hour
	CodeTTL         = 10 * time.Minute
)

// Service is the authorization server.
type Service struct {
	store Store
	clock clock.Clock
}

// NewService returns the authorization server over a store.
func NewService(s Store, c clock.Clock) *Service { return &Service{store: s, clock: c} }

// ClientSpec is what registering a client asks for.
type ClientSpec struct {
	Name         string
	OwnerID      string
	RedirectURIs []string
	Scopes       []string // empty: every scope but admin
	GrantTypes   []string // empty: authorization_code and refresh_token
	Public       bool
}

// DefaultClientScopes are granted to a client registered without a list.
var DefaultClientScopes = []string{auth.ScopeRead, auth.ScopeWrite, auth.ScopeProfile, auth.ScopeMatching, auth.ScopeEvents}

// RegisterClient creates a client and returns its secret (empty if public),
// which is shown this once and stored only as a hash.
func (s *Service) RegisterClient(ctx context.Context, spec ClientSpec) (*Client, string, error) {
	name, scopes, ownerTier, err := s.checkApp(ctx, spec.OwnerID, spec.Name, spec.RedirectURIs, spec.Scopes)
	if err != nil {
		return nil, "", err
	}
	grants := spec.GrantTypes
	if len(grants) == 0 {
		grants = KnownGrantTypes
	}
	for _, g := range grants {
		if !slices.Contains(KnownGrantTypes, g) {
			return nil, "", apperr.InvalidParam("grant_types", "invalid_grant_type", "unknown grant type %q (known: %s)", g, strings.Join(KnownGrantTypes, ", "))
		}
	}
	c := &Client{
		ID: ids.New(ids.Client), Name: name, OwnerID: spec.OwnerID, OwnerTier: ownerTier,
		RedirectURIs: slices.Clone(spec.RedirectURIs), Scopes: auth.Canonical(scopes), GrantTypes: slices.Clone(grants),
		Public: spec.Public, CreatedAt: s.clock.Now(),
	}
	var secret string
	if !spec.Public {
		secret = secrets.NewToken(secrets.ClientSecret)
		c.SecretHash, c.SecretHint = secrets.Hash(secret), secrets.Hint(secrets.ClientSecret, secret)
	}
	if err := s.store.CreateClient(ctx, c); err != nil {
		return nil, "", err
	}
	return c, secret, nil
}

// checkApp validates what registering or editing an app sets: its name,
// redirect URIs and scopes (empty: the default ones), within what the
// owner's tier allows.
func (s *Service) checkApp(ctx context.Context, ownerID, name string, uris, scopes []string) (string, []string, string, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 100 {
		return "", nil, "", apperr.InvalidParam("name", "invalid_name", "name must be 1 to 100 characters")
	}
	if len(uris) == 0 || len(uris) > 20 {
		return "", nil, "", apperr.InvalidParam("redirect_uris", "invalid_redirect_uri", "register 1 to 20 redirect URIs")
	}
	for i, u := range uris {
		if why := CheckRedirectURI(u); why != "" {
			return "", nil, "", apperr.InvalidParam("redirect_uris["+strconv.Itoa(i)+"]", "invalid_redirect_uri", "redirect URI %q %s", u, why)
		}
	}
	if len(scopes) == 0 {
		scopes = DefaultClientScopes
	}
	ownerTier, err := s.store.AccountTier(ctx, ownerID)
	if err != nil {
		return "", nil, "", err
	}
	for _, sc := range scopes {
		if !auth.KnownScope(sc) {
			return "", nil, "", apperr.InvalidParam("scopes", "invalid_scope", "unknown scope %q", sc)
		}
		if !auth.TierAllows(sc, ownerTier) {
			return "", nil, "", apperr.InvalidParam("scopes", "invalid_scope", "the admin scope needs an Enterprise account")
		}
	}
	return name, scopes, ownerTier, nil
}

// Client returns a live client, or NotFound.
func (s *Service) Client(ctx context.Context, id string) (*Client, error) {
	if !ids.Valid(ids.Client, id) {
		return nil, apperr.NotFoundf("no client %q", id)
	}
	c, err := s.store.ClientByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if c.RevokedAt != nil {
		return nil, apperr.NotFoundf("no client %q", id)
	}
	return c, nil
}

// checkScopes validates requested scopes against what the client may ask for.
func checkScopes(c *Client, requested []string) *Error {
	if len(requested) == 0 {
		return oerr(ErrInvalidScope, "scope is required: a space-separated list of scopes")
	}
	for _, sc := range requested {
		switch {
		case !auth.KnownScope(sc):
			return oerr(ErrInvalidScope, "unknown scope %q", sc)
		case !auth.TierAllows(sc, c.OwnerTier):
			return oerr(ErrInvalidScope, "the admin scope is available only to Enterprise clients")
		case !slices.Contains(c.Scopes, sc):
			return oerr(ErrInvalidScope, "this client may not request the %q scope", sc)
		}
	}
	return nil
}
