package bench

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"time"
)

func init() {
	register(Command{Name: "analytics", Summary: "requests/second of GET /v1/users/me with request counting against the same service counting nothing (target: under 2 % slower), and dashboard page p50/p99 with --deliveries in one endpoint's log (target: p99 under 50 ms)",
		Flags: func(fs *flag.FlagSet) Run {
			o := AnalyticsOptions{Options: Options{Duration: 2 * time.Second, Rounds: 6}, FlushInterval: 10 * time.Second,
				Deliveries: 100000, PageRequests: 200}
			commonFlags(fs, &o.Options)
			fs.DurationVar(&o.Duration, "duration", o.Duration, "length of each measured round")
			fs.IntVar(&o.Rounds, "rounds", o.Rounds, "rounds of each configuration, interleaved")
			fs.DurationVar(&o.FlushInterval, "flush-interval", o.FlushInterval, "how often the counting service flushes its counts")
			fs.IntVar(&o.Deliveries, "deliveries", o.Deliveries, "deliveries seeded in one endpoint's log")
			fs.IntVar(&o.PageRequests, "page-requests", o.PageRequests, "requests per dashboard page")
			return func(ctx context.Context, stdout, stderr io.Writer) error {
				if err := positive(o.Concurrency, o.Rounds, int(o.Duration), int(o.FlushInterval), o.Deliveries, o.PageRequests); err != nil {
					return err
				}
				res, err := Analytics(ctx, o, stdout, stderr)
				if err != nil {
					return err
				}
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(res)
			}
		}})
}
