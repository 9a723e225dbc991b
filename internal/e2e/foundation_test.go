package e2e

import (
	"context"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// TestKeyUseRecordFailureServes: failing to record when an API key was last
// used is logged; the request the key was presented for is served.
func TestKeyUseRecordFailureServes(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		u := s.User(t, "toucher")
		k := keyOf(t, s.App, u.ID, "read")
		ctx := context.Background()
		// A trigger makes every write of last_used_at fail.
		var stmts []string
		if s.App.DB.Dialect == store.Postgres {
			stmts = []string{
				`CREATE FUNCTION refuse_touch() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'refused'; END; $$ LANGUAGE plpgsql`,
				`CREATE TRIGGER refuse_touch BEFORE UPDATE OF last_used_at ON api_keys FOR EACH ROW EXECUTE FUNCTION refuse_touch()`,
			}
		} else {
			stmts = []string{`CREATE TRIGGER refuse_touch BEFORE UPDATE OF last_used_at ON api_keys BEGIN SELECT RAISE(ABORT, 'refused'); END`}
		}
		for _, q := range stmts {
			if _, err := s.App.DB.DB.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		if r := api(t, s, "GET", "/v1/users/me", k, ""); r.Status != 200 {
			t.Fatalf("GET /v1/users/me with a key whose use cannot be recorded: %d %s", r.Status, r.Body)
		}
	})
}

// TestPrincipalPayingAccount: the principal carries the account that pays
// for the request and its limits, for every kind of credential.
func TestPrincipalPayingAccount(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		ctx := context.Background()
		u := s.User(t, "payer")
		pro := s.User(t, "prodev")
		limit := int64(42)
		if _, err := s.App.Users.SetTier(ctx, pro.ID, users.TierPro, &limit); err != nil {
			t.Fatal(err)
		}
		third, thirdSecret := s.Client(t, oauth.ClientSpec{OwnerID: pro.ID, RedirectURIs: []string{"https://app.example/cb"}})
		first, firstSecret := s.Client(t, oauth.ClientSpec{RedirectURIs: []string{"https://first.example/cb"}})
		for _, tc := range []struct {
			name              string
			principal         func() (*auth.Principal, error)
			account, tier     string
			hourly            int64
			firstParty, isKey bool
		}{
			{"an API key pays for itself", func() (*auth.Principal, error) {
				return s.App.Keys.Authenticate(ctx, s.Key(t, u, "read"))
			}, u.ID, users.TierFree, 1000, false, true},
			{"a third-party app's owner pays", func() (*auth.Principal, error) {
				return s.App.OAuth.AuthenticateAccessToken(ctx, s.Token(t, u, third, thirdSecret, "read").AccessToken)
			}, pro.ID, users.TierPro, 42, false, false},
			{"the user pays for the service's own apps", func() (*auth.Principal, error) {
				return s.App.OAuth.AuthenticateAccessToken(ctx, s.Token(t, u, first, firstSecret, "read").AccessToken)
			}, u.ID, users.TierFree, 1000, true, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p, err := tc.principal()
				if err != nil {
					t.Fatal(err)
				}
				if p.UserID != u.ID || p.AccountID != tc.account || p.Tier != tc.tier || p.HourlyLimit != tc.hourly ||
					p.FirstParty != tc.firstParty || (p.APIKeyID != "") != tc.isKey {
					t.Fatalf("principal = %+v", p)
				}
			})
		}
	})
}
