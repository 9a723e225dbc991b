package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

func TestLoginThrottle(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
		svc := users.NewService(store.NewUsers(db), clk)
		if _, err := svc.Register(ctx, users.Registration{Email: "t@example.com", Username: "target", Password: "the right one"}); err != nil {
			t.Fatal(err)
		}
		// Failures spread over more than a window never lock.
		for i := 0; i < users.MaxLoginFailures; i++ {
			if _, err := svc.Login(ctx, "target", "guess"); !apperr.IsKind(err, apperr.Unauthenticated) {
				t.Fatalf("attempt %d: %v", i, err)
			}
			clk.Advance(users.LoginWindow / 5)
		}
		if _, err := svc.Login(ctx, "target", "the right one"); err != nil {
			t.Fatalf("slow guessing locked the account: %v", err)
		}
		// A burst locks the name, whatever the case it is typed in, even for the right password.
		for i := 0; i < users.MaxLoginFailures; i++ {
			if _, err := svc.Login(ctx, "TARGET", "guess"); !apperr.IsKind(err, apperr.Unauthenticated) {
				t.Fatalf("burst attempt %d: %v", i, err)
			}
		}
		_, err := svc.Login(ctx, "target", "the right one")
		if e, ok := apperr.As(err); !ok || e.Kind != apperr.RateLimited || e.Code != "too_many_attempts" || e.Message != "Too many failed sign-ins. Try again in 15 minutes." {
			t.Fatalf("locked login: %v", err)
		}
		// Unknown names are throttled the same way, so the lock tells nothing.
		for i := 0; i <= users.MaxLoginFailures; i++ {
			_, err = svc.Login(ctx, "nobody", "guess")
		}
		if !apperr.IsKind(err, apperr.RateLimited) {
			t.Fatalf("unknown name not throttled: %v", err)
		}
		clk.Advance(users.LoginLockout)
		if _, err := svc.Login(ctx, "target", "the right one"); err != nil {
			t.Fatalf("lock did not lift: %v", err)
		}
		clk.Advance(users.LoginWindow + users.LoginLockout)
		if n, err := db.PurgeExpired(ctx, clk.Now(), store.DefaultRetention); err != nil || n["login_attempts"] != 1 {
			t.Fatalf("purge: %v %v", n, err)
		}
	})
}
