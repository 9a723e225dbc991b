// Package apikeys manages API keys: long-lived bearer credentials for
// server-to-server use, owned by an account, acting as it, limited to the
// key's scopes.
package apikeys

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/audit"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/secrets"
)

// Key is an API key record; the key itself is stored only as a hash.
type Key struct {
	ID         string
	UserID     string
	Name       string
	Hint       string // prefix and last four characters
	Scopes     []string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}

// KeyInfo is a key with what authentication needs of its owner.
type KeyInfo struct {
	Key       Key
	UserRole  string
	UserTier  string
	UserLimit *int64 // custom hourly limit of the owner, if any
	UserGone  bool
	// Suspension of the owner's account, if any: the key answers
	// account_suspended while it holds.
	Suspension *auth.Suspension
	// Owner is the owner's account (a *users.User), read by the same query,
	// or nil; it becomes the principal's Profile.
	Owner any
}

// Store is the persistence API keys need.
type Store interface {
	// AccountTier returns the tier of a live account, or apperr NotFound.
	AccountTier(ctx context.Context, userID string) (string, error)
	CreateKey(ctx context.Context, k *Key, hash string) error
	KeyByHash(ctx context.Context, hash string) (*KeyInfo, error)
	KeyByID(ctx context.Context, userID, id string) (*Key, error)
	ListKeys(ctx context.Context, userID, after string, limit int) ([]*Key, error)
	RevokeKey(ctx context.Context, userID, id string, at time.Time) error
	// TouchKey sets last_used_at, unless it is already later than since.
	TouchKey(ctx context.Context, id string, at, since time.Time) error
}

// touchEvery bounds how often last_used_at is written: at most once a minute
// per key, so authentication is not a database write on every request.
const touchEvery = time.Minute

// Service manages API keys.
type Service struct {
	store Store
	clock clock.Clock
	log   *slog.Logger
}

// NewService returns the API key service.
func NewService(s Store, c clock.Clock, log *slog.Logger) *Service {
	return &Service{store: s, clock: c, log: log}
}

// Spec is what creating a key asks for.
type Spec struct {
	UserID string
	Name   string
	Scopes []string // empty: read
	// Within, when set, bounds the scopes: a credential cannot mint a key
	// stronger than itself.
	Within []string
}

// Create makes a key and returns it in full, this once.
func (s *Service) Create(ctx context.Context, spec Spec) (*Key, string, error) {
	name := strings.TrimSpace(spec.Name)
	if name == "" || len(name) > 100 {
		return nil, "", apperr.InvalidParam("name", "invalid_name", "name must be 1 to 100 characters")
	}
	scopes := auth.Canonical(spec.Scopes)
	if len(scopes) == 0 {
		scopes = []string{auth.ScopeRead}
	}
	ownerTier, err := s.store.AccountTier(ctx, spec.UserID)
	if err != nil {
		return nil, "", err
	}
	for _, sc := range scopes {
		if !auth.KnownScope(sc) {
			return nil, "", apperr.InvalidParam("scopes", "invalid_scope", "unknown scope %q", sc)
		}
		if !auth.TierAllows(sc, ownerTier) {
			return nil, "", apperr.InvalidParam("scopes", "invalid_scope", "the admin scope needs an Enterprise account")
		}
		if spec.Within != nil && !slices.Contains(spec.Within, sc) {
			return nil, "", apperr.InvalidParam("scopes", "invalid_scope", "a key cannot have the %q scope, which the calling credential lacks", sc)
		}
	}
	secret := secrets.NewToken(secrets.APIKeyLive)
	k := &Key{ID: ids.New(ids.APIKey), UserID: spec.UserID, Name: name, Hint: secrets.Hint(secrets.APIKeyLive, secret),
		Scopes: scopes, CreatedAt: s.clock.Now()}
	if err := s.store.CreateKey(ctx, k, secrets.Hash(secret)); err != nil {
		return nil, "", err
	}
	return k, secret, nil
}

// List pages through an account's keys, oldest first.
func (s *Service) List(ctx context.Context, userID, after string, limit int) ([]*Key, error) {
	return s.store.ListKeys(ctx, userID, after, limit)
}

// Get returns one of the account's keys.
func (s *Service) Get(ctx context.Context, userID, id string) (*Key, error) {
	if !ids.Valid(ids.APIKey, id) {
		return nil, apperr.NotFoundf("no API key %q", id)
	}
	return s.store.KeyByID(ctx, userID, id)
}

// Revoke revokes one of the account's keys; it stops working at once.
// Revoking again keeps the first revocation time.
func (s *Service) Revoke(ctx context.Context, userID, id string) (*Key, error) {
	k, err := s.Get(ctx, userID, id)
	if err != nil || k.RevokedAt != nil {
		return k, err
	}
	now := s.clock.Now()
	if err := s.store.RevokeKey(ctx, userID, id, now); err != nil {
		return nil, err
	}
	k.RevokedAt = &now
	return k, nil
}

// Authenticate resolves a bearer API key to its principal.
func (s *Service) Authenticate(ctx context.Context, key string) (*auth.Principal, error) {
	invalid := &apperr.Error{Kind: apperr.Unauthenticated, Code: "invalid_token", Message: "The API key is invalid."}
	if !secrets.WellFormed(secrets.APIKeyLive, key) && !secrets.WellFormed(secrets.APIKeyTest, key) {
		return nil, invalid
	}
	ki, err := s.store.KeyByHash(ctx, secrets.Hash(key))
	if apperr.IsKind(err, apperr.NotFound) {
		return nil, invalid
	} else if err != nil {
		return nil, err
	}
	if ki.Key.RevokedAt != nil || ki.UserGone {
		audit.Event(ctx, slog.LevelWarn, audit.RevokedCredentialUsed, slog.String("credential", "api_key"),
			slog.String("api_key_id", ki.Key.ID), slog.String("user_id", ki.Key.UserID))
		return nil, &apperr.Error{Kind: apperr.Unauthenticated, Code: "invalid_token", Message: "The API key has been revoked."}
	}
	now := s.clock.Now()
	if ki.Key.LastUsedAt == nil || now.Sub(*ki.Key.LastUsedAt) >= touchEvery {
		// last_used_at is bookkeeping: failing to write it must not fail
		// the request the key was presented for.
		if err := s.store.TouchKey(ctx, ki.Key.ID, now, now.Add(-touchEvery)); err != nil {
			s.log.WarnContext(ctx, "record API key use", "key_id", ki.Key.ID, "error", err.Error())
		}
	}
	return &auth.Principal{UserID: ki.Key.UserID, Role: ki.UserRole, Scopes: auth.ForTier(ki.Key.Scopes, ki.UserTier), APIKeyID: ki.Key.ID,
		AccountID: ki.Key.UserID, Tier: ki.UserTier, HourlyLimit: auth.HourlyLimit(ki.UserTier, ki.UserLimit), Profile: ki.Owner,
		Suspension: ki.Suspension}, nil
}
