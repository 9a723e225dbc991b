package oauth

import (
	"context"
	"log/slog"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/audit"
)

// AuthorizedApps lists the applications a user has authorized.
func (s *Service) AuthorizedApps(ctx context.Context, userID string) ([]AuthorizedApp, error) {
	return s.store.AuthorizedApps(ctx, userID)
}

// RevokeAccess withdraws a user's authorization of a client: every token of
// every grant goes at once, and the next authorization asks for consent again.
func (s *Service) RevokeAccess(ctx context.Context, userID, clientID string) error {
	ok, err := s.store.RevokeClientAccess(ctx, userID, clientID, s.clock.Now())
	if err != nil {
		return err
	}
	if !ok {
		return apperr.NotFoundf("no authorization of client %q", clientID)
	}
	audit.Event(ctx, slog.LevelInfo, audit.ConsentRevoked, slog.String("user_id", userID), slog.String("client_id", clientID))
	return nil
}
