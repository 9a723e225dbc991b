package bench

import (
	"context"
	"flag"
	"io"
	"time"
)

func init() {
	register(Command{Name: "events", Summary: "p50/p99 of GET /v1/events near a place with a text query over --events seeded events, against a single-event read, and of RSVPs all on one event against RSVPs spread over many",
		Flags: func(fs *flag.FlagSet) Run {
			o := Options{Duration: 3 * time.Second, Rounds: 3}
			latencyFlags(fs, &o)
			fs.DurationVar(&o.Duration, "duration", o.Duration, "length of each measured round")
			fs.IntVar(&o.Rounds, "rounds", o.Rounds, "rounds of each configuration")
			n := fs.Int("events", 100000, "events to seed")
			return func(ctx context.Context, stdout, stderr io.Writer) error {
				if err := positive(o.Concurrency, o.Rounds, int(o.Duration), *n); err != nil {
					return err
				}
				_, err := Events(ctx, o, *n, stdout, stderr)
				return err
			}
		}})
}
