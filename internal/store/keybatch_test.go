package store_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/secrets"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// TestKeyLookupsTogether: concurrent lookups of many keys (several per
// account, some unknown) share queries and each gets its own key, its
// owner's profile with sports, or not found; a revocation is seen by the
// next lookup.
func TestKeyLookupsTogether(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		us := users.NewService(store.NewUsers(db), clk)
		ks := store.NewAPIKeys(db)
		svc := apikeys.NewService(ks, clk, nil)
		type want struct{ id, owner, sport string }
		keys := map[string]want{}
		for i := range 6 {
			u, err := us.Register(ctx, users.Registration{Email: "u" + strconv.Itoa(i) + "@example.com", Username: "user" + strconv.Itoa(i), Password: "correct horse battery"})
			if err != nil {
				t.Fatal(err)
			}
			sport := []string{"tennis", "padel", "squash"}[i%3]
			if _, err := us.Update(ctx, u.ID, users.Patch{Sports: &[]string{sport, "running"}}); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				k, secret, err := svc.Create(ctx, apikeys.Spec{UserID: u.ID, Name: "k"})
				if err != nil {
					t.Fatal(err)
				}
				keys[secrets.Hash(secret)] = want{k.ID, u.ID, sport}
			}
		}
		var wg sync.WaitGroup
		for round := range 20 {
			for hash, w := range keys {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ki, err := ks.KeyByHash(ctx, hash)
					if err != nil {
						t.Error(err)
						return
					}
					owner := ki.Owner.(*users.User)
					if ki.Key.ID != w.id || ki.Key.UserID != w.owner || owner.ID != w.owner ||
						len(owner.Sports) != 2 || owner.Sports[0] != w.sport || owner.Sports[1] != "running" {
						t.Errorf("lookup of %s: key %s of %s, sports %v", w.id, ki.Key.ID, owner.ID, owner.Sports)
					}
					owner.Sports[0] = "changed by a handler" // must not reach another request
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := ks.KeyByHash(ctx, secrets.Hash("mpk_live_unknown"+strconv.Itoa(round))); !apperr.IsKind(err, apperr.NotFound) {
					t.Errorf("unknown key: %v", err)
				}
			}()
		}
		wg.Wait()

		for hash, w := range keys {
			if _, err := svc.Revoke(ctx, w.owner, w.id); err != nil {
				t.Fatal(err)
			}
			ki, err := ks.KeyByHash(ctx, hash)
			if err != nil || ki.Key.RevokedAt == nil {
				t.Fatalf("right after the revocation: %+v %v, want revoked", ki, err)
			}
			break
		}

	})
}
