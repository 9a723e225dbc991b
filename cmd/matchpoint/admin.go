package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/moderation"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
	"github.com/matchpoint-api/matchpoint/internal/users"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// adminCommands are the operator commands, in the order help lists them.
var adminCommands = []struct{ name, synopsis string }{
	{"create-user", "--email E --username U --password P [--first-name F] [--last-name L] [--role member|operator]"},
	{"create-client", "--name N --redirect-uri URI [--redirect-uri URI2 ...] [--scopes \"read write ...\"]\n" +
		"                 [--grant-types \"authorization_code refresh_token\"] [--public] [--owner USER_ID]"},
	{"create-api-key", "--user USER_ID --name N [--scopes \"read ...\"]"},
	{"set-tier", "--user USER_ID --tier free|pro|business|enterprise [--limit N]"},
	{"set-role", "--user USER_ID --role member|operator"},
	{"suspend-user", "--user USER_ID --reason R [--hours N]  (no --hours: until lifted)"},
	{"unsuspend-user", "--user USER_ID --reason R"},
}

var adminUsage = func() string {
	var b strings.Builder
	b.WriteString("usage: matchpoint admin <command> [flags]\n\n")
	for _, c := range adminCommands {
		fmt.Fprintf(&b, "  %-14s %s\n", c.name, c.synopsis)
	}
	b.WriteString(`
Each prints the created or changed object as JSON on stdout. They use the
database of MATCHPOINT_DATABASE_URL (or --database-url), like serve.
Run "matchpoint admin <command> --help" for the flags of a command.
`)
	return b.String()
}()

// stringList is a flag that may be given several times.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func admin(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, adminUsage)
		return errUsage
	}
	cmd := args[0]
	if isHelp(cmd) {
		if len(args) > 1 { // admin help create-user
			return admin(ctx, []string{args[1], "--help"}, getenv, stdout, stderr)
		}
		fmt.Fprint(stdout, adminUsage)
		return errHelp
	}
	synopsis := ""
	for _, c := range adminCommands {
		if c.name == cmd {
			synopsis = c.synopsis
		}
	}
	if synopsis == "" {
		fmt.Fprintf(stderr, "matchpoint admin: unknown admin command %q\n\n%s", cmd, adminUsage)
		return errUsage
	}
	fs := newFlagSet("admin "+cmd, "usage: matchpoint admin "+cmd+" "+synopsis+"\n")
	cfg := config.RegisterDatabase(fs, getenv)
	var (
		email, username, password, first, last, role string
		name, scopes, grantTypes, owner              string
		redirectURIs                                 stringList
		public                                       bool
		userID, tier, reason                         string
		limit                                        int64
		hours                                        int
	)
	switch cmd {
	case "create-user":
		fs.StringVar(&email, "email", "", "email address")
		fs.StringVar(&username, "username", "", "username")
		fs.StringVar(&password, "password", "", "password")
		fs.StringVar(&first, "first-name", "", "first name")
		fs.StringVar(&last, "last-name", "", "last name")
		fs.StringVar(&role, "role", "member", "member or operator")
	case "create-client":
		fs.StringVar(&name, "name", "", "application name shown on the consent page")
		fs.Var(&redirectURIs, "redirect-uri", "registered redirect URI (repeatable)")
		fs.StringVar(&scopes, "scopes", "", "space-separated scopes the client may request (default: all but admin)")
		fs.StringVar(&grantTypes, "grant-types", "", "space-separated grant types (default: authorization_code refresh_token)")
		fs.BoolVar(&public, "public", false, "a public client (mobile, single-page): no secret, PKCE required")
		fs.StringVar(&owner, "owner", "", "owning account (default: the service's own first-party account)")
	case "create-api-key":
		fs.StringVar(&userID, "user", "", "owning account")
		fs.StringVar(&name, "name", "", "key name")
		fs.StringVar(&scopes, "scopes", "", "space-separated scopes (default: read)")
	case "set-tier":
		fs.StringVar(&userID, "user", "", "account")
		fs.StringVar(&tier, "tier", "", "free, pro, business or enterprise")
		fs.Int64Var(&limit, "limit", 0, "custom hourly request limit (default: the tier's)")
	case "set-role":
		fs.StringVar(&userID, "user", "", "account")
		fs.StringVar(&role, "role", "", "member or operator")
	case "suspend-user", "unsuspend-user":
		fs.StringVar(&userID, "user", "", "account")
		fs.StringVar(&reason, "reason", "", "why, kept in the moderation audit log")
		if cmd == "suspend-user" {
			fs.IntVar(&hours, "hours", 0, "how long (default: until lifted)")
		}
	}
	if _, err := parseArgs(fs, args[1:], 0, stdout, stderr); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	a, err := app.Open(ctx, *cfg, app.Options{Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		return err
	}
	defer a.Close()

	var out any
	switch cmd {
	case "create-user":
		if role != auth.RoleMember && role != auth.RoleOperator {
			return fmt.Errorf("--role must be member or operator")
		}
		u, err := a.Users.Register(ctx, users.Registration{Email: email, Username: username, Password: password, FirstName: first, LastName: last, Role: role})
		if err != nil {
			return err
		}
		out = userJSON(u)
	case "create-client":
		if owner == "" {
			sys, err := a.Users.EnsureSystemAccount(ctx)
			if err != nil {
				return err
			}
			owner = sys.ID
		}
		c, secret, err := a.OAuth.RegisterClient(ctx, oauth.ClientSpec{
			Name: name, OwnerID: owner, RedirectURIs: redirectURIs,
			Scopes: strings.Fields(scopes), GrantTypes: strings.Fields(grantTypes), Public: public,
		})
		if err != nil {
			return err
		}
		out = map[string]any{
			"object": "oauth_client", "id": c.ID, "client_id": c.ID, "client_secret": secret, "name": c.Name,
			"redirect_uris": c.RedirectURIs, "scopes": auth.FormatScopes(c.Scopes), "grant_types": c.GrantTypes,
			"public": c.Public, "owner_id": c.OwnerID, "created_at": wire.Time(c.CreatedAt),
		}
		if public {
			delete(out.(map[string]any), "client_secret")
		}
	case "create-api-key":
		k, key, err := a.Keys.Create(ctx, apikeys.Spec{UserID: userID, Name: name, Scopes: strings.Fields(scopes)})
		if err != nil {
			return err
		}
		out = map[string]any{"object": "api_key", "id": k.ID, "key": key, "name": k.Name, "hint": k.Hint,
			"scopes": k.Scopes, "user_id": k.UserID, "created_at": wire.Time(k.CreatedAt)}
	case "set-tier":
		var lp *int64
		if limit != 0 {
			lp = &limit
		}
		u, err := a.Users.SetTier(ctx, userID, tier, lp)
		if err != nil {
			return err
		}
		out = map[string]any{"object": "user", "id": u.ID, "tier": u.Tier, "hourly_limit": u.HourlyLimit()}
	case "set-role":
		u, err := a.Users.SetRole(ctx, userID, role)
		if err != nil {
			return err
		}
		out = userJSON(u)
	case "suspend-user", "unsuspend-user":
		if out, err = suspendUser(ctx, a, cmd == "suspend-user", userID, reason, hours); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func userJSON(u *users.User) map[string]any {
	return map[string]any{
		"object": "user", "id": u.ID, "email": u.Email, "username": u.Username, "first_name": u.FirstName,
		"last_name": u.LastName, "role": u.Role, "tier": u.Tier, "hourly_limit": u.HourlyLimit(),
		"created_at": wire.Time(u.CreatedAt),
	}
}

// suspendUser suspends or lifts the suspension of an account from the
// terminal; the decision goes into the moderation audit log.
func suspendUser(ctx context.Context, a *app.App, suspend bool, userID, reason string, hours int) (any, error) {
	if strings.TrimSpace(reason) == "" {
		return nil, fmt.Errorf("--reason is required: it goes into the audit log")
	}
	if hours < 0 || hours > moderation.MaxSuspensionHours {
		return nil, fmt.Errorf("--hours must be from 1 to %d", moderation.MaxSuspensionHours)
	}
	if _, err := a.Users.Get(ctx, userID); err != nil {
		return nil, err
	}
	if !suspend {
		lifted, err := a.Moderation.Unsuspend(ctx, userID, reason)
		if err != nil {
			return nil, err
		}
		return map[string]any{"object": "suspension", "user_id": userID, "suspended": false, "lifted": lifted}, nil
	}
	var until *time.Time
	if hours > 0 {
		end := a.Clock.Now().Add(time.Duration(hours) * time.Hour)
		until = &end
	}
	rec, err := a.Moderation.Suspend(ctx, userID, until, reason)
	if err != nil {
		return nil, err
	}
	return map[string]any{"object": "suspension", "user_id": userID, "suspended": true, "until": wire.OptTime(until), "decision_id": rec.ID}, nil
}
