package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
)

// OAuth implements oauth.Store.
type OAuth struct{ db *DB }

// NewOAuth returns the OAuth store over db.
func NewOAuth(db *DB) *OAuth { return &OAuth{db: db} }

var _ oauth.Store = (*OAuth)(nil)

// CreateClient stores a client.
func (s *OAuth) CreateClient(ctx context.Context, c *oauth.Client) error {
	uris, err := json.Marshal(c.RedirectURIs)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO oauth_clients (id, name, owner_id, secret_hash, secret_hint, redirect_uris, scopes, grant_types, public, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		c.ID, c.Name, c.OwnerID, nullString(c.SecretHash), c.SecretHint, string(uris), auth.FormatScopes(c.Scopes),
		strings.Join(c.GrantTypes, " "), c.Public, micros(c.CreatedAt))
	if err != nil {
		return fmt.Errorf("store: create client: %w", err)
	}
	return nil
}

// ClientByID returns a client with its owner's tier.
func (s *OAuth) ClientByID(ctx context.Context, id string) (*oauth.Client, error) {
	var c oauth.Client
	var uris, scopes, grants string
	var created int64
	var revoked sql.NullInt64
	var ownerRole string
	err := s.db.QueryRowContext(ctx, `SELECT c.id, c.name, c.owner_id, u.tier, u.role, COALESCE(c.secret_hash, ''), c.secret_hint,
		c.redirect_uris, c.scopes, c.grant_types, c.public, c.created_at, c.revoked_at
		FROM oauth_clients c JOIN users u ON u.id = c.owner_id WHERE c.id = $1`, id).
		Scan(&c.ID, &c.Name, &c.OwnerID, &c.OwnerTier, &ownerRole, &c.SecretHash, &c.SecretHint, &uris, &scopes, &grants, &c.Public, &created, &revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.NotFoundf("no client %q", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get client: %w", err)
	}
	if err := json.Unmarshal([]byte(uris), &c.RedirectURIs); err != nil {
		return nil, fmt.Errorf("store: client %s redirect URIs: %w", id, err)
	}
	c.Scopes, c.GrantTypes = strings.Fields(scopes), strings.Fields(grants)
	c.FirstParty = ownerRole == auth.RoleSystem
	c.CreatedAt, c.RevokedAt = fromMicros(created), fromNullMicros(revoked)
	return &c, nil
}

// ConsentScopes returns the scopes a user has granted a client.
func (s *OAuth) ConsentScopes(ctx context.Context, userID, clientID string) ([]string, error) {
	var scope string
	err := s.db.QueryRowContext(ctx, `SELECT scope FROM oauth_consents WHERE user_id = $1 AND client_id = $2`, userID, clientID).Scan(&scope)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: get consent: %w", err)
	}
	return strings.Fields(scope), nil
}

// SaveConsent records the scopes a user has granted a client.
func (s *OAuth) SaveConsent(ctx context.Context, userID, clientID string, scopes []string, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO oauth_consents (user_id, client_id, scope, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (user_id, client_id) DO UPDATE SET scope = excluded.scope, updated_at = excluded.updated_at`,
		userID, clientID, auth.FormatScopes(scopes), micros(at))
	if err != nil {
		return fmt.Errorf("store: save consent: %w", err)
	}
	return nil
}

// CreateCode stores an authorization code.
func (s *OAuth) CreateCode(ctx context.Context, c *oauth.Code) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO oauth_codes (id, code_hash, client_id, user_id, redirect_uri, scope,
		code_challenge, code_challenge_method, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		c.ID, c.Hash, c.ClientID, c.UserID, c.RedirectURI, auth.FormatScopes(c.Scopes),
		c.CodeChallenge, c.CodeChallengeMethod, micros(c.CreatedAt), micros(c.ExpiresAt))
	if err != nil {
		return fmt.Errorf("store: create code: %w", err)
	}
	return nil
}

// CodeByHash returns a code.
func (s *OAuth) CodeByHash(ctx context.Context, hash string) (*oauth.Code, error) {
	var c oauth.Code
	var scope string
	var created, expires int64
	var used sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT id, code_hash, client_id, user_id, redirect_uri, scope, code_challenge,
		code_challenge_method, created_at, expires_at, used_at, COALESCE(grant_id, '') FROM oauth_codes WHERE code_hash = $1`, hash).
		Scan(&c.ID, &c.Hash, &c.ClientID, &c.UserID, &c.RedirectURI, &scope, &c.CodeChallenge, &c.CodeChallengeMethod,
			&created, &expires, &used, &c.GrantID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.NotFoundf("no such code")
	}
	if err != nil {
		return nil, fmt.Errorf("store: get code: %w", err)
	}
	c.Scopes = strings.Fields(scope)
	c.CreatedAt, c.ExpiresAt, c.UsedAt = fromMicros(created), fromMicros(expires), fromNullMicros(used)
	return &c, nil
}

func insertTokens(ctx context.Context, tx *sql.Tx, access *oauth.AccessToken, refresh *oauth.RefreshToken) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO oauth_access_tokens (id, token_hash, grant_id, scope, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, access.ID, access.Hash, access.GrantID, auth.FormatScopes(access.Scopes),
		micros(access.CreatedAt), micros(access.ExpiresAt)); err != nil {
		return fmt.Errorf("store: insert access token: %w", err)
	}
	if refresh == nil {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO oauth_refresh_tokens (id, token_hash, grant_id, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5)`, refresh.ID, refresh.Hash, refresh.GrantID, micros(refresh.CreatedAt), micros(refresh.ExpiresAt)); err != nil {
		return fmt.Errorf("store: insert refresh token: %w", err)
	}
	return nil
}

// errAlreadyUsed aborts a transaction whose single-use row was taken first.
var errAlreadyUsed = errors.New("already used")

// IssueFromCode marks a code used and stores the grant and its first tokens.
// The conditional UPDATE is the arbiter of concurrent exchanges: on
// PostgreSQL the second one waits on the row lock and then matches nothing;
// on SQLite the IMMEDIATE transactions run one after the other.
func (s *OAuth) IssueFromCode(ctx context.Context, codeID string, at time.Time, g *oauth.Grant, access *oauth.AccessToken, refresh *oauth.RefreshToken) (bool, error) {
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE oauth_codes SET used_at = $2, grant_id = $3 WHERE id = $1 AND used_at IS NULL`,
			codeID, micros(at), g.ID)
		if err != nil {
			return fmt.Errorf("store: use code: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errAlreadyUsed
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO oauth_grants (id, client_id, user_id, scope, created_at) VALUES ($1, $2, $3, $4, $5)`,
			g.ID, g.ClientID, g.UserID, auth.FormatScopes(g.Scopes), micros(g.CreatedAt)); err != nil {
			return fmt.Errorf("store: insert grant: %w", err)
		}
		return insertTokens(ctx, tx, access, refresh)
	})
	if errors.Is(err, errAlreadyUsed) {
		return false, nil
	}
	return err == nil, err
}

const grantColumns = `g.id, g.client_id, g.user_id, g.scope, g.created_at, g.revoked_at`

func scanGrantInto(g *oauth.Grant, scope *string, created *int64, revoked *sql.NullInt64) {
	g.Scopes = strings.Fields(*scope)
	g.CreatedAt, g.RevokedAt = fromMicros(*created), fromNullMicros(*revoked)
}

// RefreshByHash returns a refresh token with its grant.
func (s *OAuth) RefreshByHash(ctx context.Context, hash string) (*oauth.RefreshInfo, error) {
	var ri oauth.RefreshInfo
	var gScope string
	var gCreated, created, expires int64
	var gRevoked, used, suspended, suspendedUntil sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT t.id, t.token_hash, t.grant_id, t.created_at, t.expires_at, t.used_at,
		`+grantColumns+`, u.username, u.suspended_at, u.suspended_until
		FROM oauth_refresh_tokens t JOIN oauth_grants g ON g.id = t.grant_id JOIN users u ON u.id = g.user_id
		WHERE t.token_hash = $1`, hash).
		Scan(&ri.Token.ID, &ri.Token.Hash, &ri.Token.GrantID, &created, &expires, &used,
			&ri.Grant.ID, &ri.Grant.ClientID, &ri.Grant.UserID, &gScope, &gCreated, &gRevoked, &ri.Username, &suspended, &suspendedUntil)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.NotFoundf("no such refresh token")
	}
	if err != nil {
		return nil, fmt.Errorf("store: get refresh token: %w", err)
	}
	ri.Token.CreatedAt, ri.Token.ExpiresAt, ri.Token.UsedAt = fromMicros(created), fromMicros(expires), fromNullMicros(used)
	scanGrantInto(&ri.Grant, &gScope, &gCreated, &gRevoked)
	ri.Suspension = auth.SuspensionOf(fromNullMicros(suspended), fromNullMicros(suspendedUntil))
	return &ri, nil
}

// Rotate marks a refresh token used and stores its successors.
func (s *OAuth) Rotate(ctx context.Context, oldID string, at time.Time, access *oauth.AccessToken, refresh *oauth.RefreshToken) (bool, error) {
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE oauth_refresh_tokens SET used_at = $2 WHERE id = $1 AND used_at IS NULL`, oldID, micros(at))
		if err != nil {
			return fmt.Errorf("store: use refresh token: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errAlreadyUsed
		}
		return insertTokens(ctx, tx, access, refresh)
	})
	if errors.Is(err, errAlreadyUsed) {
		return false, nil
	}
	return err == nil, err
}

// AccessTokenByHash returns an access token with everything a request
// needs, in one indexed query: this runs on every API call.
func (s *OAuth) AccessTokenByHash(ctx context.Context, hash string) (*oauth.TokenInfo, error) {
	var ti oauth.TokenInfo
	var scope, gScope string
	var created, expires, gCreated int64
	var revoked, gRevoked, clientRevoked, userDeleted, userLimit, ownerLimit, suspended, suspendedUntil sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT t.id, t.token_hash, t.grant_id, t.scope, t.created_at, t.expires_at, t.revoked_at,
		`+grantColumns+`, u.role, u.username, u.tier, u.rate_limit, o.id, o.tier, o.rate_limit, o.role, c.revoked_at, u.deleted_at, u.suspended_at, u.suspended_until
		FROM oauth_access_tokens t JOIN oauth_grants g ON g.id = t.grant_id
		JOIN oauth_clients c ON c.id = g.client_id JOIN users o ON o.id = c.owner_id JOIN users u ON u.id = g.user_id
		WHERE t.token_hash = $1`, hash).
		Scan(&ti.Token.ID, &ti.Token.Hash, &ti.Token.GrantID, &scope, &created, &expires, &revoked,
			&ti.Grant.ID, &ti.Grant.ClientID, &ti.Grant.UserID, &gScope, &gCreated, &gRevoked,
			&ti.UserRole, &ti.Username, &ti.UserTier, &userLimit, &ti.OwnerID, &ti.OwnerTier, &ownerLimit, &ti.OwnerRole,
			&clientRevoked, &userDeleted, &suspended, &suspendedUntil)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.NotFoundf("no such access token")
	}
	if err != nil {
		return nil, fmt.Errorf("store: get access token: %w", err)
	}
	ti.Token.Scopes = strings.Fields(scope)
	ti.Token.CreatedAt, ti.Token.ExpiresAt, ti.Token.RevokedAt = fromMicros(created), fromMicros(expires), fromNullMicros(revoked)
	scanGrantInto(&ti.Grant, &gScope, &gCreated, &gRevoked)
	ti.ClientGone, ti.UserGone = clientRevoked.Valid, userDeleted.Valid
	ti.Suspension = auth.SuspensionOf(fromNullMicros(suspended), fromNullMicros(suspendedUntil))
	if userLimit.Valid {
		ti.UserLimit = &userLimit.Int64
	}
	if ownerLimit.Valid {
		ti.OwnerLimit = &ownerLimit.Int64
	}
	return &ti, nil
}

// RevokeAccessToken revokes one access token.
func (s *OAuth) RevokeAccessToken(ctx context.Context, id string, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE oauth_access_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, id, micros(at))
	if err != nil {
		return fmt.Errorf("store: revoke access token: %w", err)
	}
	return nil
}

// RevokeGrant revokes a grant; every token of it then fails its lookup.
func (s *OAuth) RevokeGrant(ctx context.Context, grantID string, at time.Time) error {
	if grantID == "" {
		return nil
	}
	_, err := s.db.ExecContext(ctx, `UPDATE oauth_grants SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, grantID, micros(at))
	if err != nil {
		return fmt.Errorf("store: revoke grant: %w", err)
	}
	return nil
}

// AuthorizedApps lists a user's consents with their clients' names.
func (s *OAuth) AuthorizedApps(ctx context.Context, userID string) ([]oauth.AuthorizedApp, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT c.id, c.name, k.scope, k.updated_at FROM oauth_consents k
		JOIN oauth_clients c ON c.id = k.client_id WHERE k.user_id = $1 AND c.revoked_at IS NULL ORDER BY k.updated_at DESC, c.id`, userID)
	if err != nil {
		return nil, fmt.Errorf("store: list authorized apps: %w", err)
	}
	defer rows.Close()
	var out []oauth.AuthorizedApp
	for rows.Next() {
		var a oauth.AuthorizedApp
		var scope string
		var updated int64
		if err := rows.Scan(&a.ClientID, &a.ClientName, &scope, &updated); err != nil {
			return nil, fmt.Errorf("store: list authorized apps: %w", err)
		}
		a.Scopes, a.UpdatedAt = strings.Fields(scope), fromMicros(updated)
		out = append(out, a)
	}
	return out, rows.Err()
}

// RevokeClientAccess revokes a user's grants to a client and the consent.
func (s *OAuth) RevokeClientAccess(ctx context.Context, userID, clientID string, at time.Time) (bool, error) {
	var found bool
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM oauth_consents WHERE user_id = $1 AND client_id = $2`, userID, clientID)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		res, err = tx.ExecContext(ctx, `UPDATE oauth_grants SET revoked_at = $3 WHERE user_id = $1 AND client_id = $2 AND revoked_at IS NULL`,
			userID, clientID, micros(at))
		if err != nil {
			return err
		}
		m, _ := res.RowsAffected()
		found = n > 0 || m > 0
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("store: revoke client access: %w", err)
	}
	return found, nil
}
