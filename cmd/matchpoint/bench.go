package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/bench"
)

const benchUsage = `usage: matchpoint bench <api|token|events> [flags]

  api     requests/second of GET /v1/users/me with a bearer token, against a
          bare handler serving the same JSON in the same process (the ratio
          is the figure to compare across machines)
  token   grants/second of POST /oauth/token: code exchange and refresh
  events  p50/p99 of GET /v1/events near a place with a text query over
          --events seeded events, against a single-event read, and of
          RSVPs all on one event against RSVPs spread over many

Each runs the service on a throwaway database: a temporary SQLite file, or a
fresh schema of --postgres (dropped afterwards).
`

func benchCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "api" && args[0] != "token" && args[0] != "events") {
		fmt.Fprint(stderr, benchUsage)
		return errUsage
	}
	fs := flag.NewFlagSet("bench "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := bench.Options{}
	fs.StringVar(&o.DatabaseURL, "postgres", "", "postgres://... server to measure on (default: SQLite)")
	fs.IntVar(&o.Concurrency, "concurrency", 8, "concurrent clients")
	fs.DurationVar(&o.Duration, "duration", 3*time.Second, "length of each measured round (api)")
	fs.IntVar(&o.Rounds, "rounds", 3, "rounds of each configuration (api)")
	fs.IntVar(&o.Grants, "grants", 1000, "grants of each type (token)")
	nEvents := fs.Int("events", 100000, "events to seed (events)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	if err := fs.Parse(args[1:]); err != nil {
		return errUsage
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
	case "events":
		_, err = bench.Events(ctx, o, *nEvents, stdout, stderr)
	default:
		_, err = bench.Token(ctx, o, stdout)
	}
	return err
}
