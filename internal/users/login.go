package users

import (
	"context"
	"log/slog"
	"strings"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/audit"
	"github.com/matchpoint-api/matchpoint/internal/secrets"
)

// Login checks a username-or-email and password. Failures are one error, so
// the answer does not tell which accounts exist, and are throttled per
// account and client IP (throttle.go); an unknown login name is counted like
// an account, so a lock tells nothing either.
func (s *Service) Login(ctx context.Context, login, password string) (*User, error) {
	u, err := s.userByLogin(ctx, login)
	if err != nil && !apperr.IsKind(err, apperr.NotFound) {
		return nil, err
	}
	// Never log or store what was typed as the login: people type passwords
	// there. An unknown name is counted under its hash.
	subject, who := "login:"+secrets.Hash(loginKey(login)), slog.String("user_id", "")
	if u != nil {
		subject, who = "user:"+u.ID, slog.String("user_id", u.ID)
	}
	cs := loginCounters(subject, audit.ClientIP(ctx))
	wait, err := s.lockedFor(ctx, cs)
	if err != nil {
		return nil, err
	}
	if wait > 0 {
		audit.Event(ctx, slog.LevelWarn, audit.LoginThrottled, who)
		return nil, throttled(wait, "failed sign-ins")
	}
	ok := false
	if u != nil && u.PasswordHash != "" {
		if ok, err = secrets.CheckPassword(u.PasswordHash, password); err != nil {
			return nil, err
		}
	} else {
		secrets.BurnPasswordCheck(password)
	}
	if !ok {
		audit.Event(ctx, slog.LevelWarn, audit.LoginFailed, who, slog.Bool("known_account", u != nil))
		if err := s.record(ctx, cs, who); err != nil {
			return nil, err
		}
		return nil, &apperr.Error{Kind: apperr.Unauthenticated, Code: "invalid_credentials", Message: "Wrong username, email or password."}
	}
	// Only this address's count on the account goes: the owner signing in
	// must not wipe what an attacker elsewhere has run up.
	if err := s.throttle.ResetLoginFailures(ctx, cs[0].key); err != nil {
		return nil, err
	}
	if u.Suspension.ActiveAt(s.clock.Now()) {
		// The password was right: say why, so the person knows to wait or appeal.
		e := u.Suspension.Err()
		return nil, &apperr.Error{Kind: apperr.Forbidden, Code: e.Code, Message: e.Message + " You cannot sign in until then; you may appeal the decision.", SuspendedUntil: e.SuspendedUntil}
	}
	audit.Event(ctx, slog.LevelInfo, audit.LoginSucceeded, who)
	return u, nil
}

// loginKey is the look-up key of what was typed: an email key when it has an
// @ (usernames cannot), else a username key.
func loginKey(login string) string {
	login = strings.TrimSpace(login)
	if strings.Contains(login, "@") {
		return EmailKey(login)
	}
	return strings.ToLower(login)
}

func (s *Service) userByLogin(ctx context.Context, login string) (*User, error) {
	key := loginKey(login)
	if strings.Contains(key, "@") {
		return s.store.UserByEmailKey(ctx, key)
	}
	return s.store.UserByUsernameKey(ctx, key)
}
