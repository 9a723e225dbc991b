package oauth

import (
	"github.com/matchpoint-api/matchpoint/internal/auth"

	"context"
	"time"
)

// Code is an authorization code, stored by hash.
type Code struct {
	ID                  string
	Hash                string
	ClientID            string
	UserID              string
	RedirectURI         string
	Scopes              []string
	CodeChallenge       string
	CodeChallengeMethod string
	CreatedAt           time.Time
	ExpiresAt           time.Time
	UsedAt              *time.Time
	GrantID             string // the grant issued from it, once used
}

// Grant is one authorization of a client by a user: the family of all tokens
// descending from one code. Revoking it revokes them all.
type Grant struct {
	ID        string
	ClientID  string
	UserID    string
	Scopes    []string
	CreatedAt time.Time
	RevokedAt *time.Time
}

// AccessToken is a bearer token, stored by hash.
type AccessToken struct {
	ID        string
	Hash      string
	GrantID   string
	Scopes    []string
	CreatedAt time.Time
	ExpiresAt time.Time
	RevokedAt *time.Time
}

// RefreshToken is a single-use refresh token, stored by hash.
type RefreshToken struct {
	ID        string
	Hash      string
	GrantID   string
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

// TokenInfo is an access token with what a request needs to know about it.
type TokenInfo struct {
	Token      AccessToken
	Grant      Grant
	UserRole   string
	Username   string
	UserTier   string
	UserLimit  *int64 // the user's custom hourly limit, if any
	OwnerID    string // the client's owner
	OwnerTier  string // tier of the client's owner
	OwnerLimit *int64 // the owner's custom hourly limit, if any
	OwnerRole  string // role of the client's owner: system for first-party clients
	ClientGone bool   // client revoked
	UserGone   bool   // user deleted
	// Suspension of the user's account, if any.
	Suspension *auth.Suspension
}

// RefreshInfo is a refresh token with its grant. Every use of one follows
// client authentication, which already checked the client is live and knows
// its owner's tier.
type RefreshInfo struct {
	Token    RefreshToken
	Grant    Grant
	Username string
	// Suspension of the user's account, if any: no new tokens while it holds.
	Suspension *auth.Suspension
}

// Store is the persistence the OAuth server needs.
type Store interface {
	AppStore
	// AccountTier returns the tier of a live account, or apperr NotFound.
	AccountTier(ctx context.Context, userID string) (string, error)
	CreateClient(ctx context.Context, c *Client) error
	// ClientByID returns a client with its owner's tier, or apperr NotFound.
	ClientByID(ctx context.Context, id string) (*Client, error)

	ConsentScopes(ctx context.Context, userID, clientID string) ([]string, error)
	SaveConsent(ctx context.Context, userID, clientID string, scopes []string, at time.Time) error

	CreateCode(ctx context.Context, c *Code) error
	CodeByHash(ctx context.Context, hash string) (*Code, error)
	// IssueFromCode marks the code used and stores the grant and tokens, all
	// at once; false means the code was already used (nothing is stored).
	IssueFromCode(ctx context.Context, codeID string, at time.Time, g *Grant, access *AccessToken, refresh *RefreshToken) (bool, error)

	RefreshByHash(ctx context.Context, hash string) (*RefreshInfo, error)
	// Rotate marks the refresh token used and stores its successors; false
	// means it was already used (nothing is stored).
	Rotate(ctx context.Context, oldID string, at time.Time, access *AccessToken, refresh *RefreshToken) (bool, error)

	AccessTokenByHash(ctx context.Context, hash string) (*TokenInfo, error)
	RevokeAccessToken(ctx context.Context, id string, at time.Time) error
	// RevokeGrant revokes a grant and so every token of its family.
	RevokeGrant(ctx context.Context, grantID string, at time.Time) error

	// AuthorizedApps lists the clients a user has consented to.
	AuthorizedApps(ctx context.Context, userID string) ([]AuthorizedApp, error)
	// RevokeClientAccess revokes every grant of a user to a client and forgets
	// the consent; false if there was none.
	RevokeClientAccess(ctx context.Context, userID, clientID string, at time.Time) (bool, error)
}

// AuthorizedApp is a client a user has let act for them.
type AuthorizedApp struct {
	ClientID   string
	ClientName string
	Scopes     []string
	UpdatedAt  time.Time
}
