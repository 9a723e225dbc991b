package bench

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"runtime"
	"time"
)

func init() {
	register(Command{Name: "messaging", Summary: "messages/second sent over HTTP (each client in its own conversation, and all in one; and with --send-clients sending, the service's capacity), search p50/p99 over --messages seeded messages against reading one message, and send-to-receive latency over GET /v1/stream with --stream-clients connected",
		Flags: func(fs *flag.FlagSet) Run {
			o := Options{Duration: 3 * time.Second, Rounds: 3}
			commonFlags(fs, &o)
			fs.DurationVar(&o.Duration, "duration", o.Duration, "length of each measured round")
			fs.IntVar(&o.Rounds, "rounds", o.Rounds, "rounds of each configuration")
			mo := MessagingOptions{}
			fs.IntVar(&mo.Messages, "messages", 1000000, "messages to seed")
			fs.IntVar(&mo.StreamClients, "stream-clients", 1000, "accounts connected to GET /v1/stream, in groups of 100 (0: no stream latency)")
			fs.IntVar(&mo.StreamMessages, "stream-messages", 200, "messages sent to them")
			fs.IntVar(&mo.SendClients, "send-clients", 32, "clients sending at once, each in a conversation of its own, for the service's send capacity (the rate once the writer is never idle)")
			fs.IntVar(&mo.StreamWriters, "stream-writers", runtime.NumCPU(), "clients sending those messages, each waiting for its answer (default: one per core; more measure a saturated service)")
			return func(ctx context.Context, stdout, stderr io.Writer) error {
				if err := positive(o.Concurrency, o.Rounds, int(o.Duration), mo.Messages, mo.StreamMessages, mo.StreamWriters, mo.SendClients); err != nil {
					return err
				}
				if mo.StreamClients < 0 {
					return positive(mo.StreamClients)
				}
				r, err := Messaging(ctx, o, mo, stderr)
				if err != nil {
					return err
				}
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(r)
			}
		}})
}
