package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/audit"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

const rightPassword = "the right one, at last"

func from(ip string) context.Context { return audit.WithRequest(context.Background(), ip, nil) }

func wantLocked(t *testing.T, err error, minutes int) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.RateLimited || e.Code != "too_many_attempts" {
		t.Fatalf("want too_many_attempts, got %v", err)
	}
	if wait, ok := users.RetryAfter(err); !ok || wait <= time.Duration(minutes-1)*time.Minute || wait > time.Duration(minutes)*time.Minute {
		t.Fatalf("RetryAfter = %v, %v; want about %d minutes", wait, ok, minutes)
	}
}

func TestLoginThrottle(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		clk := clock.NewFake(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
		svc := users.NewService(store.NewUsers(db), clk)
		for _, name := range []string{"target", "bystander"} {
			if _, err := svc.Register(context.Background(), users.Registration{Email: name + "@example.com", Username: name, Password: rightPassword}); err != nil {
				t.Fatal(err)
			}
		}
		attacker, owner := from("203.0.113.66"), from("198.51.100.7")
		fail := func(ctx context.Context, login string, n int) {
			t.Helper()
			for i := 0; i < n; i++ {
				if _, err := svc.Login(ctx, login, "guess"); !apperr.IsKind(err, apperr.Unauthenticated) {
					t.Fatalf("%s attempt %d: %v", login, i, err)
				}
			}
		}

		t.Run("failures spread over more than a window never lock", func(t *testing.T) {
			for i := 0; i < users.MaxLoginFailures; i++ {
				fail(attacker, "target", 1)
				clk.Advance(users.LoginWindow / 5)
			}
			if _, err := svc.Login(attacker, "target", rightPassword); err != nil {
				t.Fatalf("slow guessing locked the account: %v", err)
			}
		})

		t.Run("username and email share one count, and the owner elsewhere still signs in", func(t *testing.T) {
			fail(attacker, "target", users.MaxLoginFailures/2)
			fail(attacker, "TARGET@example.com", users.MaxLoginFailures-users.MaxLoginFailures/2)
			_, err := svc.Login(attacker, "target", rightPassword)
			wantLocked(t, err, 15)
			_, err = svc.Login(attacker, "target@example.com", "guess")
			wantLocked(t, err, 15)
			if _, err := svc.Login(owner, "target", rightPassword); err != nil {
				t.Fatalf("the attacker's failures locked the owner out: %v", err)
			}
			// The attacker's address may still sign in to other accounts, for now.
			if _, err := svc.Login(attacker, "bystander", rightPassword); err != nil {
				t.Fatalf("other account from the same address: %v", err)
			}
			clk.Advance(users.LoginLockout)
			if _, err := svc.Login(attacker, "target", rightPassword); err != nil {
				t.Fatalf("lock did not lift: %v", err)
			}
		})

		t.Run("one address guessing many accounts is stopped", func(t *testing.T) {
			clk.Advance(users.LoginWindow)
			sprayer := from("192.0.2.1")
			for i := 0; i < 50; i++ {
				fail(sprayer, fmt.Sprintf("victim%d", i), 1)
			}
			_, err := svc.Login(sprayer, "bystander", rightPassword)
			wantLocked(t, err, 15)
			if _, err := svc.Login(owner, "bystander", rightPassword); err != nil {
				t.Fatalf("another address is locked too: %v", err)
			}
		})

		t.Run("IPv6 addresses count by /64", func(t *testing.T) {
			clk.Advance(users.LoginWindow + users.LoginLockout)
			for i := 0; i < users.MaxLoginFailures; i++ {
				fail(from(fmt.Sprintf("2001:db8:1:2::%x", i+1)), "target", 1)
			}
			_, err := svc.Login(from("2001:db8:1:2:ffff::1"), "target", rightPassword)
			wantLocked(t, err, 15)
		})

		t.Run("many addresses reach the account's own limit", func(t *testing.T) {
			clk.Advance(users.LoginWindow + users.LoginLockout)
			for i := 0; i < 100; i++ {
				fail(from(fmt.Sprintf("10.9.%d.%d", i/200, i%200+1)), "bystander", 1)
			}
			_, err := svc.Login(owner, "bystander", rightPassword)
			wantLocked(t, err, 60)
		})

		t.Run("unknown names are throttled the same way, so a lock tells nothing", func(t *testing.T) {
			fail(attacker, "nobody", users.MaxLoginFailures)
			_, err := svc.Login(attacker, "nobody", "guess")
			wantLocked(t, err, 15)
		})

		t.Run("without a client IP the account is still protected", func(t *testing.T) {
			clk.Advance(2 * time.Hour)
			fail(context.Background(), "target", users.MaxLoginFailures)
			_, err := svc.Login(context.Background(), "target", rightPassword)
			wantLocked(t, err, 15)
		})

		t.Run("sign-ups are throttled per address", func(t *testing.T) {
			signer := from("198.51.100.200")
			for i := 0; i < 10; i++ {
				// Failed sign-ups count too: they probe which emails exist.
				if _, err := svc.Register(signer, users.Registration{Email: "target@example.com", Username: fmt.Sprintf("new%d", i), Password: rightPassword}); !apperr.IsKind(err, apperr.Conflict) {
					t.Fatalf("sign-up %d: %v", i, err)
				}
			}
			_, err := svc.Register(signer, users.Registration{Email: "fresh@example.com", Username: "fresh", Password: rightPassword})
			wantLocked(t, err, 15)
			if _, err := svc.Register(owner, users.Registration{Email: "fresh@example.com", Username: "fresh", Password: rightPassword}); err != nil {
				t.Fatalf("sign-up from another address: %v", err)
			}
		})

		clk.Advance(2 * time.Hour)
		if n, err := db.PurgeExpired(context.Background(), clk.Now(), store.DefaultRetention); err != nil || n["login_attempts"] == 0 {
			t.Fatalf("purge: %v %v", n, err)
		}
		var left int
		if err := db.QueryRow(`SELECT COUNT(*) FROM login_attempts`).Scan(&left); err != nil || left != 0 {
			t.Fatalf("%d rows left after purge (%v)", left, err)
		}
	})
}
