package bench

import (
	"context"
	"errors"
	"flag"
	"io"
	"strconv"
	"strings"
	"time"
)

func init() {
	register(Command{Name: "matching", Summary: "p50/p99 and requests/second of POST /v1/matches/find after seeding --users N[,M...] (dense city and sparse villages); --quality: precision@10 and nDCG@10 against distance alone",
		Flags: func(fs *flag.FlagSet) Run {
			o := Options{Duration: 3 * time.Second, Rounds: 3}
			latencyFlags(fs, &o)
			fs.DurationVar(&o.Duration, "duration", o.Duration, "length of each measured round")
			fs.IntVar(&o.Rounds, "rounds", o.Rounds, "rounds of each configuration")
			sizes := fs.String("users", "100000,1000000", "people to seed, comma-separated, one run each")
			quality := fs.Bool("quality", false, "check the ranking quality instead of measuring latency")
			return func(ctx context.Context, stdout, stderr io.Writer) error {
				if err := positive(o.Concurrency, o.Rounds, int(o.Duration)); err != nil {
					return err
				}
				if *quality {
					_, err := Quality(ctx, o, stderr, stdout)
					return err
				}
				mo := MatchingOptions{Options: o, Stderr: stderr}
				for _, f := range strings.Split(*sizes, ",") {
					n, err := strconv.Atoi(strings.TrimSpace(f))
					if err != nil || n < 1 {
						return errors.New("--users wants positive counts like 100000,1000000")
					}
					mo.Sizes = append(mo.Sizes, n)
				}
				return Matching(ctx, mo, stdout)
			}
		}})
}
