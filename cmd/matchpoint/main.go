// Command matchpoint runs the Matchpoint service and its operator tools.
//
//	matchpoint serve                 run the HTTP service
//	matchpoint migrate [up|status]   bring the database schema up to date
//	matchpoint admin <command>       create users, clients, API keys; set tiers
//	matchpoint bench <name>          measure throughput and quality
//	matchpoint listen                forward webhook events to a local URL
//	matchpoint seed --users N        fill the database with demo data
//	matchpoint version               the version, as JSON
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"

	"github.com/mattn/go-isatty"

	"github.com/matchpoint-api/matchpoint/internal/app"
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
  bench     measure throughput and quality (matchpoint bench --help lists them)
  listen    forward your account's webhook events to a local URL (development)
  seed      fill the database with synthetic demo data (seed --users N)
  version   print the version as JSON (also: matchpoint --version)

Run "matchpoint <command> --help" for the flags of a command. Every flag also
reads a MATCHPOINT_* environment variable.
`

// run is the whole program, with its environment passed in so tests can
// run it too. It returns the exit code: 0, 1 when the command failed, 2 when
// the command line was wrong.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, args[1:], getenv, stdout, stderr)
	case "migrate":
		err = migrate(ctx, args[1:], getenv, stdout, stderr)
	case "admin":
		err = admin(ctx, args[1:], getenv, stdout, stderr)
	case "bench":
		err = benchCmd(ctx, args[1:], getenv, stdout, stderr)
	case "listen":
		err = listen(ctx, args[1:], getenv, stdout, stderr)
	case "seed":
		err = seed(ctx, args[1:], getenv, stdout, stderr)
	case "version", "--version", "-version":
		err = version(args[1:], stdout, stderr)
	case "help", "-h", "--help", "-help":
		if len(args) > 1 && args[1] != "help" && args[1][0] != '-' {
			// "matchpoint help admin create-user" is "matchpoint admin create-user --help".
			return run(ctx, append(args[1:len(args):len(args)], "--help"), getenv, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "matchpoint: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	switch {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintf(stderr, "matchpoint %s: %v\n", args[0], err)
	return 1
}

// version prints the version, and the commit when the binary was built from
// a git checkout, as JSON like every operator command.
func version(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "usage: matchpoint version\n\nPrint the version of the service and its API as JSON.\n")
	if _, err := parseArgs(fs, args, 0, stdout, stderr); err != nil {
		return err
	}
	out := map[string]string{"version": app.Version, "go": runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				out["commit"] = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					out["commit"] += "+modified"
				}
			}
		}
	}
	return printJSON(stdout, out)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// newLogger makes the structured logger of the settings. Without a format
// set, people at a terminal get text and log collectors get JSON.
func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	level, _ := cfg.Level()
	opts := &slog.HandlerOptions{Level: level}
	format := cfg.LogFormat
	if format == "" {
		format = defaultLogFormat(w)
	}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// defaultLogFormat is text when w is a terminal, JSON otherwise.
func defaultLogFormat(w io.Writer) string {
	if f, ok := w.(*os.File); ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())) {
		return "text"
	}
	return "json"
}
