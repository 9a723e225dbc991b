package bench

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"time"
)

func init() {
	register(Command{Name: "messaging", Summary: "messages/second sent over HTTP (each client in its own conversation, and all in one), and search p50/p99 over --messages seeded messages, against reading one message",
		Flags: func(fs *flag.FlagSet) Run {
			o := Options{Duration: 3 * time.Second, Rounds: 3}
			commonFlags(fs, &o)
			fs.DurationVar(&o.Duration, "duration", o.Duration, "length of each measured round")
			fs.IntVar(&o.Rounds, "rounds", o.Rounds, "rounds of each configuration")
			n := fs.Int("messages", 1000000, "messages to seed")
			return func(ctx context.Context, stdout, stderr io.Writer) error {
				if err := positive(o.Concurrency, o.Rounds, int(o.Duration), *n); err != nil {
					return err
				}
				r, err := Messaging(ctx, o, *n, stderr)
				if err != nil {
					return err
				}
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(r)
			}
		}})
}
