package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/secrets"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// TestCachedKeysFollowEveryChange: a key looked up twice is answered from
// memory the second time, and every change to it or to its owner's account
// is seen by the next lookup, whoever makes it: this handle, or another one
// on the same database (as another node or an operator command would), by
// the service's code or by hand-written SQL. Recording a key's use keeps it
// cached.
func TestCachedKeysFollowEveryChange(t *testing.T) {
	testdb.Each(t, func(t *testing.T, url string, db *store.DB) {
		ctx := context.Background()
		other := testdb.Open(t, url)
		clk := clock.NewFake(time.Now())
		us := users.NewService(store.NewUsers(other), clk)
		ks := store.NewAPIKeys(db)
		u, err := us.Register(ctx, users.Registration{Email: "ann@example.com", Username: "ann", Password: "correct horse battery"})
		if err != nil {
			t.Fatal(err)
		}
		_, secret, err := apikeys.NewService(store.NewAPIKeys(other), clk, nil).Create(ctx, apikeys.Spec{UserID: u.ID, Name: "k", Scopes: []string{auth.ScopeRead}})
		if err != nil {
			t.Fatal(err)
		}
		hash := secrets.Hash(secret)
		lookup := func() *apikeys.KeyInfo {
			t.Helper()
			ki, err := ks.KeyByHash(ctx, hash)
			if err != nil {
				t.Fatal(err)
			}
			return ki
		}
		lookup()
		_, _, before := store.CredCache(db)
		if ki := lookup(); ki.Owner.(*users.User).Username != "ann" {
			t.Fatalf("owner %+v", ki.Owner)
		}
		if _, n, hits := store.CredCache(db); n != 1 || hits != before+1 {
			t.Fatalf("second lookup: %d cached, %d hits (want 1 and %d)", n, hits, before+1)
		}
		// A change the service made through the other handle is seen by
		// the very next lookup (on PostgreSQL the change waits before it
		// returns: see credBarrier), one typed by hand as well on SQLite,
		// and within credFresh (50 ms) on PostgreSQL.
		seen := func(what string, ok func(ki *apikeys.KeyInfo) bool) {
			t.Helper()
			if !ok(lookup()) {
				t.Fatalf("%s: the next lookup still answers the old key", what)
			}
		}
		byHand := func(what string, ok func(ki *apikeys.KeyInfo) bool) {
			t.Helper()
			if db.Dialect == store.Postgres {
				time.Sleep(60 * time.Millisecond)
			}
			seen(what, ok)
		}
		if _, err := us.Update(ctx, u.ID, users.Patch{FirstName: ptr("Ann"), Sports: &[]string{"tennis"}}); err != nil {
			t.Fatal(err)
		}
		seen("profile update", func(ki *apikeys.KeyInfo) bool {
			o := ki.Owner.(*users.User)
			return o.FirstName == "Ann" && len(o.Sports) == 1 && o.Sports[0] == "tennis"
		})
		limit := int64(5_000_000)
		if _, err := us.SetTier(ctx, u.ID, auth.TierEnterprise, &limit); err != nil {
			t.Fatal(err)
		}
		seen("tier", func(ki *apikeys.KeyInfo) bool {
			return ki.UserTier == auth.TierEnterprise && ki.UserLimit != nil && *ki.UserLimit == limit
		})
		if _, err := other.ExecContext(ctx, `UPDATE api_keys SET scopes = 'read write' WHERE key_hash = $1`, hash); err != nil {
			t.Fatal(err)
		}
		byHand("scopes changed by hand", func(ki *apikeys.KeyInfo) bool { return len(ki.Key.Scopes) == 2 })
		if _, err := other.ExecContext(ctx, `UPDATE users SET suspended_at = $2 WHERE id = $1`, u.ID, time.Now().UnixMicro()); err != nil {
			t.Fatal(err)
		}
		byHand("suspension by hand", func(ki *apikeys.KeyInfo) bool { return ki.Suspension != nil })
		if _, err := other.ExecContext(ctx, `UPDATE users SET suspended_at = NULL WHERE id = $1`, u.ID); err != nil {
			t.Fatal(err)
		}
		byHand("suspension lifted by hand", func(ki *apikeys.KeyInfo) bool { return ki.Suspension == nil })

		// Recording use changes nothing the key grants: it stays cached.
		lookup()
		_, _, before = store.CredCache(db)
		if err := ks.TouchKey(ctx, lookup().Key.ID, time.Now(), time.Now()); err != nil {
			t.Fatal(err)
		}
		if ki := lookup(); ki.Key.LastUsedAt == nil {
			t.Fatal("last use not recorded in the cached key")
		}
		if _, _, hits := store.CredCache(db); hits != before+2 {
			t.Fatalf("after recording use: %d hits, want %d", hits, before+2)
		}

		// Revoked through this handle: the very next lookup, on any engine.
		if err := ks.RevokeKey(ctx, u.ID, lookup().Key.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		if ki := lookup(); ki.Key.RevokedAt == nil {
			t.Fatal("a key revoked through this handle is still answered unrevoked")
		}
	})
}

// TestCachedKeysDeletedAccount: erasing an account through the same handle
// is seen by the next lookup of its cached key, which is then revoked.
func TestCachedKeysDeletedAccount(t *testing.T) {
	testdb.Each(t, func(t *testing.T, url string, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Now())
		ustore := store.NewUsers(db)
		us := users.NewService(ustore, clk)
		ks := store.NewAPIKeys(db)
		u, err := us.Register(ctx, users.Registration{Email: "bob@example.com", Username: "bob", Password: "correct horse battery"})
		if err != nil {
			t.Fatal(err)
		}
		_, secret, err := apikeys.NewService(ks, clk, nil).Create(ctx, apikeys.Spec{UserID: u.ID, Name: "k"})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := ks.KeyByHash(ctx, secrets.Hash(secret)); err != nil {
				t.Fatal(err)
			}
		}
		if err := ustore.DeleteUser(ctx, u.ID, time.Now(), nil); err != nil {
			t.Fatal(err)
		}
		ki, err := ks.KeyByHash(ctx, secrets.Hash(secret))
		if err != nil {
			t.Fatal(err)
		}
		if !ki.UserGone || ki.Key.RevokedAt == nil {
			t.Fatalf("after the account's erasure: gone %t, revoked %v", ki.UserGone, ki.Key.RevokedAt)
		}
	})
}

func ptr[T any](v T) *T { return &v }

// TestCachedKeysListenerLost: on PostgreSQL, when the connection that hears
// changes is cut, lookups keep working from the database, a change made
// meanwhile is seen, and the cache comes back with a new connection.
func TestCachedKeysListenerLost(t *testing.T) {
	u := testdb.NewURL(t, store.Postgres)
	db, other := testdb.Open(t, u), testdb.Open(t, u)
	ctx := context.Background()
	clk := clock.NewFake(time.Now())
	usr, err := users.NewService(store.NewUsers(other), clk).Register(ctx, users.Registration{Email: "cy@example.com", Username: "cyril", Password: "correct horse battery"})
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := apikeys.NewService(store.NewAPIKeys(other), clk, nil).Create(ctx, apikeys.Spec{UserID: usr.ID, Name: "k"})
	if err != nil {
		t.Fatal(err)
	}
	ks := store.NewAPIKeys(db)
	lookup := func() *apikeys.KeyInfo {
		t.Helper()
		ki, err := ks.KeyByHash(ctx, secrets.Hash(secret))
		if err != nil {
			t.Fatal(err)
		}
		return ki
	}
	lookup()
	lookup()
	pid := store.CredListenerPID(db)
	if live, n, _ := store.CredCache(db); !live || n != 1 || pid == 0 {
		t.Fatalf("cache live %t with %d keys, listener %d", live, n, pid)
	}
	if _, err := other.ExecContext(ctx, `SELECT pg_terminate_backend($1)`, int(pid)); err != nil {
		t.Fatal(err)
	}
	if _, err := other.ExecContext(ctx, `UPDATE api_keys SET revoked_at = $2 WHERE key_hash = $1`, secrets.Hash(secret), time.Now().UnixMicro()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond) // a change typed by hand: credFresh
	if ki := lookup(); ki.Key.RevokedAt == nil {
		t.Fatal("the revocation made while the listener was cut is not seen")
	}
	if live, _, _ := store.CredCache(db); live {
		t.Fatal("the cache is still in use without its listener")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		lookup()
		if live, n, _ := store.CredCache(db); live && n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cache did not come back with a new listener")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if pid2 := store.CredListenerPID(db); pid2 == pid {
		t.Fatalf("same listener backend %d after it was terminated", pid)
	}
}
