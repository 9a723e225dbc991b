// Package sessions keeps browser sign-ins for the service's own pages (login,
// consent, sign-up). Sessions live in the database, not in a node's memory,
// so any node can serve the next page of a flow.
package sessions

import (
	"context"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/secrets"
)

// TTL is how long a sign-in lasts.
const TTL = 12 * time.Hour

// Store is the persistence sessions need.
type Store interface {
	CreateSession(ctx context.Context, id, hash, userID string, created, expires time.Time) error
	// SessionUser returns the user of an unexpired session, or apperr NotFound.
	SessionUser(ctx context.Context, hash string, now time.Time) (string, error)
	DeleteSession(ctx context.Context, hash string) error
}

// Service signs browsers in and out.
type Service struct {
	store Store
	clock clock.Clock
}

// NewService returns the sessions service.
func NewService(s Store, c clock.Clock) *Service { return &Service{store: s, clock: c} }

// Start signs a user in and returns the cookie value.
func (s *Service) Start(ctx context.Context, userID string) (string, error) {
	tok := secrets.NewToken(secrets.WebSession)
	now := s.clock.Now()
	if err := s.store.CreateSession(ctx, ids.New(ids.Session), secrets.Hash(tok), userID, now, now.Add(TTL)); err != nil {
		return "", err
	}
	return tok, nil
}

// User returns the signed-in user of a cookie value, or "" if none.
func (s *Service) User(ctx context.Context, tok string) (string, error) {
	if !secrets.WellFormed(secrets.WebSession, tok) {
		return "", nil
	}
	id, err := s.store.SessionUser(ctx, secrets.Hash(tok), s.clock.Now())
	if apperr.IsKind(err, apperr.NotFound) {
		return "", nil
	}
	return id, err
}

// End signs the cookie's session out.
func (s *Service) End(ctx context.Context, tok string) error {
	if !secrets.WellFormed(secrets.WebSession, tok) {
		return nil
	}
	return s.store.DeleteSession(ctx, secrets.Hash(tok))
}
