package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
)

// ClientsOf lists an owner's live clients, oldest first.
func (s *OAuth) ClientsOf(ctx context.Context, ownerID string) ([]*oauth.Client, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM oauth_clients WHERE owner_id = $1 AND revoked_at IS NULL ORDER BY id`, ownerID)
	if err != nil {
		return nil, fmt.Errorf("store: list clients: %w", err)
	}
	ids, err := scanStrings(rows)
	if err != nil {
		return nil, err
	}
	out := make([]*oauth.Client, 0, len(ids))
	for _, id := range ids {
		c, err := s.ClientByID(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// UpdateClient saves a client's name, redirect URIs and scopes.
func (s *OAuth) UpdateClient(ctx context.Context, c *oauth.Client) error {
	uris, err := json.Marshal(c.RedirectURIs)
	if err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE oauth_clients SET name = $2, redirect_uris = $3, scopes = $4 WHERE id = $1`,
		c.ID, c.Name, string(uris), auth.FormatScopes(c.Scopes)); err != nil {
		return fmt.Errorf("store: update client: %w", err)
	}
	return nil
}

// SetClientSecret replaces a client's secret hash and hint.
func (s *OAuth) SetClientSecret(ctx context.Context, id, hash, hint string) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE oauth_clients SET secret_hash = $2, secret_hint = $3 WHERE id = $1`, id, hash, hint); err != nil {
		return fmt.Errorf("store: set client secret: %w", err)
	}
	return nil
}

// AuthorizedUsers counts the people with a live grant to a client.
func (s *OAuth) AuthorizedUsers(ctx context.Context, clientID string) (int64, error) {
	var n int64
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(DISTINCT user_id) FROM oauth_grants WHERE client_id = $1 AND revoked_at IS NULL`,
		clientID).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: authorized users: %w", err)
	}
	return n, nil
}
