package e2e

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/store"
)

// TestJanitorPurgesEveryJob makes a row for every purge job of the janitor
// through the service, lets them expire, and checks each job removes its
// rows (and that a second pass finds nothing: the deletes are idempotent).
func TestJanitorPurgesEveryJob(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		ctx := context.Background()
		u := s.User(t, "janitor") // an outbox event
		c, secret := s.Client(t, oauth.ClientSpec{RedirectURIs: []string{"https://app.example/cb"}})
		ts := s.Token(t, u, c, secret, "read", "write") // a used code, an access and a refresh token
		req, err := s.App.OAuth.ParseAuthorize(ctx, url.Values{"client_id": {c.ID}, "redirect_uri": {c.RedirectURIs[0]},
			"response_type": {"code"}, "scope": {"read"}, "state": {"x"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.App.OAuth.Approve(ctx, u.ID, req); err != nil { // an unused code
			t.Fatal(err)
		}
		if _, err := s.App.Sessions.Start(ctx, u.ID); err != nil { // a web session
			t.Fatal(err)
		}
		r := api(t, s, "PATCH", "/v1/users/me", ts.AccessToken, `{"bio":"x"}`) // another event
		if r.Status != 200 {
			t.Fatal(r.Status)
		}
		k := s.Key(t, u, "read", "write")
		idem := apiWithHeader(t, s, "POST", "/v1/api-keys", k, `{"name":"idem"}`, "Idempotency-Key", "purge-me")
		if idem.Status != 201 {
			t.Fatalf("idempotent create: %d %s", idem.Status, idem.Body)
		}
		if _, err := s.App.Users.Login(ctx, "janitor", "wrong password here"); err == nil { // a sign-in failure
			t.Fatal("a wrong password signed in")
		}
		// Every consumer finishes the events, so they may go once old.
		for _, consumer := range outbox.Consumers {
			claimed, err := s.App.Outbox.Claim(ctx, consumer, "test", s.Clock.Now(), time.Minute, 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, cl := range claimed {
				if err := s.App.Outbox.Done(ctx, consumer, "test", cl.Seq); err != nil {
					t.Fatal(err)
				}
			}
		}

		s.Clock.Advance(store.DefaultRetention.Outbox + time.Hour)
		n, err := s.App.DB.PurgeExpired(ctx, s.Clock.Now(), store.DefaultRetention)
		if err != nil {
			t.Fatal(err)
		}
		for _, job := range []string{"web_sessions", "idempotency_keys", "outbox_events", "oauth_codes", "oauth_access_tokens", "oauth_refresh_tokens", "login_attempts"} {
			t.Run(job, func(t *testing.T) {
				if n[job] < 1 {
					t.Errorf("purged %d rows of %s; all purges: %v", n[job], job, n)
				}
			})
		}
		t.Run("a second pass finds nothing", func(t *testing.T) {
			if n, _ := s.App.DB.PurgeExpired(ctx, s.Clock.Now(), store.DefaultRetention); sum(n) != 0 {
				t.Errorf("a second pass purged %v", n)
			}
		})
	})
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}
