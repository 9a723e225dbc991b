package oauth

import (
	"context"
	"slices"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/secrets"
)

// AppStore is what managing one's own apps (the developer dashboard) needs.
type AppStore interface {
	// ClientsOf lists an owner's live clients, oldest first.
	ClientsOf(ctx context.Context, ownerID string) ([]*Client, error)
	// UpdateClient saves a client's name, redirect URIs and scopes.
	UpdateClient(ctx context.Context, c *Client) error
	// SetClientSecret replaces a client's secret hash and hint.
	SetClientSecret(ctx context.Context, id, hash, hint string) error
	// AuthorizedUsers counts the people with a live grant to a client.
	AuthorizedUsers(ctx context.Context, clientID string) (int64, error)
}

// App returns one of the owner's live apps; another owner's is a 404.
func (s *Service) App(ctx context.Context, ownerID, id string) (*Client, error) {
	c, err := s.Client(ctx, id)
	if err != nil {
		return nil, err
	}
	if c.OwnerID != ownerID {
		return nil, apperr.NotFoundf("no client %q", id)
	}
	return c, nil
}

// Apps lists the owner's live apps.
func (s *Service) Apps(ctx context.Context, ownerID string) ([]*Client, error) {
	return s.store.ClientsOf(ctx, ownerID)
}

// AppEdit is what editing an app changes.
type AppEdit struct {
	Name         string
	RedirectURIs []string
	Scopes       []string
}

// UpdateApp changes an owner's app. Tokens already issued keep their scopes
// until they expire; new authorizations use the new list.
func (s *Service) UpdateApp(ctx context.Context, ownerID, id string, e AppEdit) (*Client, error) {
	c, err := s.App(ctx, ownerID, id)
	if err != nil {
		return nil, err
	}
	name, scopes, _, err := s.checkApp(ctx, ownerID, e.Name, e.RedirectURIs, e.Scopes)
	if err != nil {
		return nil, err
	}
	c.Name, c.RedirectURIs, c.Scopes = name, slices.Clone(e.RedirectURIs), auth.Canonical(scopes)
	if err := s.store.UpdateClient(ctx, c); err != nil {
		return nil, err
	}
	return c, nil
}

// RotateAppSecret gives a confidential app a new secret, returned this once;
// the old one stops working at once.
func (s *Service) RotateAppSecret(ctx context.Context, ownerID, id string) (*Client, string, error) {
	c, err := s.App(ctx, ownerID, id)
	if err != nil {
		return nil, "", err
	}
	if c.Public {
		return nil, "", apperr.InvalidParam("client_id", "public_client", "a public client has no secret")
	}
	secret := secrets.NewToken(secrets.ClientSecret)
	c.SecretHash, c.SecretHint = secrets.Hash(secret), secrets.Hint(secrets.ClientSecret, secret)
	if err := s.store.SetClientSecret(ctx, c.ID, c.SecretHash, c.SecretHint); err != nil {
		return nil, "", err
	}
	return c, secret, nil
}

// AuthorizedUsers counts the people who authorized an owner's app.
func (s *Service) AuthorizedUsers(ctx context.Context, ownerID, id string) (int64, error) {
	if !ids.Valid(ids.Client, id) {
		return 0, apperr.NotFoundf("no client %q", id)
	}
	if _, err := s.App(ctx, ownerID, id); err != nil {
		return 0, err
	}
	return s.store.AuthorizedUsers(ctx, id)
}
