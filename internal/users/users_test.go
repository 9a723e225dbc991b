package users_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

const pw = "a long enough secret"

func wantInvalid(t *testing.T, err error, code, param, msg string) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.Invalid || e.Code != code || e.Param != param || !strings.Contains(e.Message, msg) {
		t.Fatalf("got %v; want %s on %s saying %q", err, code, param, msg)
	}
}

func TestRegisterRules(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		svc := users.NewService(store.NewUsers(db), clock.NewFake(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)))
		reg := func(email, username, password, role string) (*users.User, error) {
			return svc.Register(ctx, users.Registration{Email: email, Username: username, Password: password, Role: role})
		}

		t.Run("roles", func(t *testing.T) {
			for _, role := range []string{auth.RoleSystem, "admin", "Operator"} {
				_, err := reg(role+"@example.com", "r-"+strings.ToLower(role), pw, role)
				wantInvalid(t, err, "invalid_role", "role", "member or operator")
			}
			if u, err := reg("op@example.com", "op1", pw, auth.RoleOperator); err != nil || u.Role != auth.RoleOperator {
				t.Fatalf("operator: %v %v", u, err)
			}
			if u, err := reg("mem@example.com", "mem1", pw, ""); err != nil || u.Role != auth.RoleMember {
				t.Fatalf("default role: %v %v", u, err)
			}
			sys, err := svc.EnsureSystemAccount(ctx)
			if err != nil || sys.Role != auth.RoleSystem {
				t.Fatalf("system account: %v %v", sys, err)
			}
		})

		t.Run("passwords", func(t *testing.T) {
			for _, c := range []struct{ password, msg string }{
				{"eleven char", "12 to 256 characters"},
				{strings.Repeat("x", 257), "12 to 256 characters"},
				{"my name is Pat-Smith!", "must not contain your username"},
				{"PAT@EXAMPLE.ORG is me", "must not contain your email"},
				{"qwerty123456", "most common"},
				{"1QAZ2WSX3EDC", "most common"},
			} {
				_, err := reg("pat@example.org", "pat-smith", c.password, "")
				wantInvalid(t, err, "invalid_password", "password", c.msg)
			}
			if _, err := reg("pat@example.org", "pat-smith", "twelve chars", ""); err != nil {
				t.Fatalf("a twelve-character password: %v", err)
			}
		})

		t.Run("look-alike emails", func(t *testing.T) {
			ann, err := reg("ann@example.com", "ann", pw, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, email := range []string{
				"ann\u200b@example.com", // zero-width space
				"an\u00adn@example.com", // soft hyphen
				"ann\u2060@example.com", // word joiner
				"\u202eann@example.com", // bidi override
				"ann\ufe0f@example.com", // variation selector
				"\u0430nn@example.com",  // Cyrillic а among Latin letters
				"ann@ex\u0430mple.com",  // ... in the domain
				"ann@example.c\u03bfm",  // Greek ο in the top-level domain
			} {
				_, err := reg(email, "look", pw, "")
				wantInvalid(t, err, "invalid_email", "email", "")
			}
			// NFKC folds compatibility forms, so full-width letters are the same address.
			_, err = reg("\uff41\uff4e\uff4e@example.com", "fullwidth", pw, "")
			if e, ok := apperr.As(err); !ok || e.Code != "email_taken" {
				t.Fatalf("full-width look-alike: %v", err)
			}
			if u, err := svc.Login(ctx, "\uff21NN@example.com", pw); err != nil || u.ID != ann.ID {
				t.Fatalf("sign-in with the full-width form: %v %v", u, err)
			}
			// One script per part, or the ones written together, is fine.
			for i, email := range []string{"\u0430\u043d\u043d\u0430@\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444", "\u5c71\u7530\u305f\u308d\u3046@example.jp", "jos\u00e9@example.com"} {
				if u, err := reg(email, "script"+strconv.Itoa(i), pw, ""); err != nil || u.Email != email {
					t.Fatalf("%q: %v %v", email, u, err)
				}
			}
		})

		t.Run("keys are computed once and stored as given", func(t *testing.T) {
			u, err := reg("Mixed.Case@Example.COM", "MixedCase", pw, "")
			if err != nil {
				t.Fatal(err)
			}
			if u.EmailKey != "mixed.case@example.com" || u.UsernameKey != "mixedcase" {
				t.Fatalf("keys = %q %q", u.EmailKey, u.UsernameKey)
			}
			got, err := store.NewUsers(db).UserByEmailKey(ctx, "mixed.case@example.com")
			if err != nil || got.ID != u.ID || got.EmailKey != u.EmailKey || got.UsernameKey != u.UsernameKey {
				t.Fatalf("by email key: %+v %v", got, err)
			}
			name := "Renamed.One"
			if got, err = svc.Update(ctx, u.ID, users.Patch{Username: &name}); err != nil || got.UsernameKey != "renamed.one" {
				t.Fatalf("rename: %+v %v", got, err)
			}
			if got, err = store.NewUsers(db).UserByUsernameKey(ctx, "renamed.one"); err != nil || got.ID != u.ID {
				t.Fatalf("by new username key: %v", err)
			}
		})
	})
}

func TestReviewerIsNotSubject(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		svc := users.NewService(store.NewUsers(db), clock.NewFake(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)))
		op, err := svc.Register(ctx, users.Registration{Email: "op@example.com", Username: "opal", Password: pw, Role: auth.RoleOperator})
		if err != nil {
			t.Fatal(err)
		}
		v, err := svc.RequestVerification(ctx, op.ID, "passport", "")
		if err != nil {
			t.Fatal(err)
		}
		for _, approve := range []bool{true, false} {
			_, err := svc.ReviewVerification(ctx, op.ID, v.ID, approve, "")
			if e, ok := apperr.As(err); !ok || e.Kind != apperr.Forbidden {
				t.Fatalf("self-review (approve=%v): %v", approve, err)
			}
		}
		other, err := svc.Register(ctx, users.Registration{Email: "op2@example.com", Username: "onyx", Password: pw, Role: auth.RoleOperator})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := svc.ReviewVerification(ctx, other.ID, v.ID, true, ""); err != nil || got.Status != users.VerificationApproved {
			t.Fatalf("another operator's review: %v %v", got, err)
		}
	})
}
