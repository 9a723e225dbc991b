package apptest

import (
	"context"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// Operator registers an operator of the service (Enterprise, so that its
// credentials may carry admin) and returns it with an API key carrying
// read, write and admin.
func (s *Server) Operator(t testing.TB, username string) (*users.User, string) {
	t.Helper()
	ctx := context.Background()
	u := s.User(t, username)
	if _, err := s.App.Users.SetRole(ctx, u.ID, auth.RoleOperator); err != nil {
		t.Fatal(err)
	}
	u, err := s.App.Users.SetTier(ctx, u.ID, users.TierEnterprise, nil)
	if err != nil {
		t.Fatal(err)
	}
	return u, s.Key(t, u, auth.ScopeRead, auth.ScopeWrite, auth.ScopeAdmin)
}
