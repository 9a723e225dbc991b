package bench

import (
	"context"
	"encoding/json"
	"flag"
	"io"
)

func init() {
	register(Command{Name: "stream", Summary: "events/second and p50/p99 send-to-receive latency over GET /v1/stream with --clients connected accounts (messages sent over HTTP, or notifications), against one connected account receiving the same events",
		Flags: func(fs *flag.FlagSet) Run {
			o := StreamOptions{Source: "messages", Clients: 1000, Events: 5000, Writers: 8, Rounds: 3}
			fs.StringVar(&o.DatabaseURL, "postgres", "", "postgres://... server to measure on (default: SQLite)")
			fs.StringVar(&o.Source, "source", o.Source, "messages (sent over HTTP in direct conversations) or notifications (written through the centre)")
			fs.IntVar(&o.Clients, "clients", o.Clients, "connected streams, one account each")
			fs.IntVar(&o.Events, "events", o.Events, "events written per round, round robin over the connected accounts")
			fs.IntVar(&o.Writers, "writers", o.Writers, "goroutines writing (for messages, as many sending accounts)")
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
