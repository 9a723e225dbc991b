// Command matchpoint runs the Matchpoint service and its operator tools.
//
//	matchpoint serve                 run the HTTP service
//	matchpoint migrate [up|status]   bring the database schema up to date
//	matchpoint admin <command>       create users, clients, API keys; set tiers
//	matchpoint bench <api|token|matching> measure throughput
//	matchpoint seed --users N        fill the database with demo users
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/matchpoint-api/matchpoint/internal/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage: matchpoint <command> [flags]

commands:
  serve     run the HTTP service
  migrate   bring the database schema up to date (migrate status lists migrations)
  admin     operator tools: create-user, create-client, create-api-key, set-tier, set-role
  bench     measure throughput: bench api, bench token, bench matching
  seed      fill the database with synthetic demo users (seed --users N)

Run "matchpoint <command> -h" for the flags of a command. Every flag also
reads a MATCHPOINT_* environment variable.
`

// run is the whole program, with its environment passed in so tests can
// run it too. It returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, args[1:], getenv, stderr)
	case "migrate":
		err = migrate(ctx, args[1:], getenv, stdout, stderr)
	case "admin":
		err = admin(ctx, args[1:], getenv, stdout, stderr)
	case "bench":
		err = benchCmd(ctx, args[1:], getenv, stdout, stderr)
	case "seed":
		err = seed(ctx, args[1:], getenv, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "matchpoint: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		if err == errUsage {
			return 2
		}
		fmt.Fprintf(stderr, "matchpoint %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// errUsage reports bad flags; the flag package has already said what.
var errUsage = fmt.Errorf("usage")

// newLogger makes the structured logger of the settings.
func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	level, _ := cfg.Level()
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}
