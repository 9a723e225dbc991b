package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/bench"
)

const benchUsage = `usage: matchpoint bench <api|token|fastpath> [flags]

  api     requests/second of GET /v1/users/me with a bearer token, against a
          bare handler serving the same JSON in the same process (the ratio
          is the figure to compare across machines)
  token   grants/second of POST /oauth/token: code exchange and refresh
  fastpath
          requests/second of GET /v1/users/me with an API key, rate limits on,
          against GET /healthz, measured from outside a "matchpoint serve"
          process (the ratio is the figure: at least 0.5 is the target)

Each runs the service on a throwaway database: a temporary SQLite file, or a
fresh schema of --postgres (dropped afterwards).
`

func benchCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	switch {
	case len(args) == 0:
		fmt.Fprint(stderr, benchUsage)
		return errUsage
	case isHelp(args[0]):
		fmt.Fprint(stdout, benchUsage)
		return errHelp
	case args[0] != "api" && args[0] != "token" && args[0] != "fastpath":
		fmt.Fprintf(stderr, "matchpoint bench: unknown bench command %q\n\n%s", args[0], benchUsage)
		return errUsage
	}
	fs := newFlagSet("bench "+args[0], "usage: matchpoint bench "+args[0]+" [flags]\n")
	o := bench.Options{Duration: 3 * time.Second, Rounds: 3, Grants: 1000}
	fs.StringVar(&o.DatabaseURL, "postgres", "", "postgres://... server to measure on (default: SQLite)")
	fs.IntVar(&o.Concurrency, "concurrency", 8, "concurrent clients")
	if args[0] == "api" || args[0] == "fastpath" {
		fs.DurationVar(&o.Duration, "duration", o.Duration, "length of each measured round")
		fs.IntVar(&o.Rounds, "rounds", o.Rounds, "rounds of each configuration")
	} else {
		fs.IntVar(&o.Grants, "grants", o.Grants, "grants of each type")
	}
	if args[0] == "fastpath" {
		fs.StringVar(&o.RedisURL, "redis", "", "redis://... to count rate limits in (default: in process)")
		fs.BoolVar(&o.InProcess, "inprocess", false, "serve from the bench process, so --cpuprofile profiles the service too")
		fs.BoolVar(&o.Wrk, "wrk", false, "generate the load with wrk (apt-get install wrk) instead of Go HTTP clients")
		fs.IntVar(&o.Keys, "keys", 1, "API keys (of as many accounts) the clients share round robin")
	}
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	if _, err := parseArgs(fs, args[1:], 0, stdout, stderr); err != nil {
		return err
	}
	if o.Concurrency < 1 || o.Rounds < 1 || o.Duration <= 0 || o.Grants < 1 {
		return fmt.Errorf("--concurrency, --rounds, --duration and --grants must be positive")
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var err error
	switch args[0] {
	case "api":
		_, err = bench.API(ctx, o, stdout)
	case "fastpath":
		_, err = bench.FastPath(ctx, o, stdout)
	default:
		_, err = bench.Token(ctx, o, stdout)
	}
	return err
}
