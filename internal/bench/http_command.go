package bench

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

func init() {
	register(Command{Name: "http", Summary: "a realistic mix (profile reads, match finds, event searches, writes with webhook fan-out) against 1 or more matchpoint serve nodes or a running service: throughput and latency percentiles per operation, against GET /healthz on the same nodes",
		Flags: func(fs *flag.FlagSet) Run {
			o := HTTPOptions{Options: Options{Duration: 20 * time.Second}, Users: 20000, Events: 20000, Hooks: 2}
			commonFlags(fs, &o.Options)
			fs.DurationVar(&o.Duration, "duration", o.Duration, "length of each configuration's run of the mix (GET /healthz alone runs a third of it before)")
			nodes := fs.String("nodes", "1", "cluster sizes to measure in turn over the same data, comma-separated (several nodes need --postgres)")
			fs.StringVar(&o.RedisURL, "redis", "", "redis://... for the nodes' rate-limit counters (default: each node counts in process)")
			fs.IntVar(&o.Users, "users", o.Users, "people to seed")
			fs.IntVar(&o.Events, "events", o.Events, "sports events to seed")
			fs.IntVar(&o.Hooks, "hooks", o.Hooks, "webhook endpoints of each client account: each write fans out to this many deliveries")
			target := fs.String("target", "", "URLs of a running service or cluster, comma-separated, instead of nodes of the bench's own")
			fs.StringVar(&o.APIKey, "api-key", "", "with --target: the API key the load uses (read write matching events, a limit the run cannot reach)")
			return func(ctx context.Context, stdout, stderr io.Writer) error {
				o.Stderr = stderr
				for _, f := range strings.Split(*nodes, ",") {
					n, err := strconv.Atoi(strings.TrimSpace(f))
					if err != nil || n < 1 {
						return fmt.Errorf("--nodes: %q is not a positive number", f)
					}
					o.Nodes = append(o.Nodes, n)
				}
				if *target != "" {
					o.Target = strings.Split(*target, ",")
				}
				if err := positive(o.Concurrency, int(o.Duration), o.Users); err != nil {
					return err
				}
				res, err := HTTP(ctx, o)
				if res != nil && len(res.Runs) > 0 {
					enc := json.NewEncoder(stdout)
					enc.SetIndent("", "  ")
					_ = enc.Encode(res)
				}
				return err
			}
		}})
}
