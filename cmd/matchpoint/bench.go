package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/bench"
)

const benchUsage = `usage: matchpoint bench <api|token|matching> [flags]

  api     requests/second of GET /v1/users/me with a bearer token, against a
          bare handler serving the same JSON in the same process (the ratio
          is the figure to compare across machines)
  token   grants/second of POST /oauth/token: code exchange and refresh
  matching  latency of POST /v1/matches/find after seeding --users N[,M...]
          people, from the most populous place (dense) and from villages
          (sparse); with --quality, precision@10 and nDCG@10 of the ranking
          against a distance-only baseline on data with planted groups

Each runs the service on a throwaway database: a temporary SQLite file, or a
fresh schema of --postgres (dropped afterwards).
`

func benchCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "api" && args[0] != "token" && args[0] != "matching") {
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
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	sizes := fs.String("users", "100000,1000000", "people to seed, comma-separated, one run each (matching)")
	quality := fs.Bool("quality", false, "check the ranking quality instead of measuring latency (matching)")
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
	switch {
	case args[0] == "api":
		_, err = bench.API(ctx, o, stdout)
	case args[0] == "token":
		_, err = bench.Token(ctx, o, stdout)
	case *quality:
		_, err = bench.Quality(ctx, o, stderr, stdout)
	default:
		mo := bench.MatchingOptions{Options: o, Stderr: stderr}
		for _, f := range strings.Split(*sizes, ",") {
			n, perr := strconv.Atoi(strings.TrimSpace(f))
			if perr != nil || n < 1 {
				return fmt.Errorf("--users wants positive counts like 100000,1000000")
			}
			mo.Sizes = append(mo.Sizes, n)
		}
		err = bench.Matching(ctx, mo, stdout)
	}
	return err
}
