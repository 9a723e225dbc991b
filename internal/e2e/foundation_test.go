package e2e

import (
	"context"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/store"
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
