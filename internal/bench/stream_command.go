package bench

import (
	"context"
	"encoding/json"
	"flag"
	"io"
)

func init() {
	register(Command{Name: "stream", Summary: "events/second and p50/p99 write-to-receive latency of GET /v1/stream with --clients connected accounts, against one connected account receiving the same events",
		Flags: func(fs *flag.FlagSet) Run {
			o := StreamOptions{Clients: 1000, Events: 5000, Writers: 8, Rounds: 3}
			fs.StringVar(&o.DatabaseURL, "postgres", "", "postgres://... server to measure on (default: SQLite)")
			fs.IntVar(&o.Clients, "clients", o.Clients, "connected streams, one account each")
			fs.IntVar(&o.Events, "events", o.Events, "notifications written per round, round robin over the accounts")
			fs.IntVar(&o.Writers, "writers", o.Writers, "goroutines writing, one transaction per notification")
			fs.IntVar(&o.Rounds, "rounds", o.Rounds, "measured rounds (the median rate is reported)")
			return func(ctx context.Context, stdout, stderr io.Writer) error {
				if err := positive(o.Clients, o.Events, o.Writers, o.Rounds); err != nil {
					return err
				}
				r, err := Stream(ctx, o, stderr)
				if err != nil {
					return err
				}
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(r)
			}
		}})
}
