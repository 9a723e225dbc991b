package bench

import (
	"context"
	"flag"
	"io"
	"time"
)

func init() {
	register(Command{Name: "webhooks", Summary: "deliveries/second to a local HTTPS endpoint, and p50/p99 from the change to the endpoint's 200 at a steady rate",
		Flags: func(fs *flag.FlagSet) Run {
			o := WebhookOptions{}
			fs.StringVar(&o.DatabaseURL, "postgres", "", "postgres://... server to measure on (default: SQLite)")
			fs.IntVar(&o.Burst, "burst", 20000, "events recorded at once for the deliveries/second figure")
			fs.IntVar(&o.Rate, "rate", 500, "events per second of the steady run")
			fs.DurationVar(&o.Duration, "duration", 10*time.Second, "length of the steady run")
			return func(ctx context.Context, stdout, _ io.Writer) error {
				if err := positive(o.Burst, o.Rate, int(o.Duration)); err != nil {
					return err
				}
				return Webhooks(ctx, o, stdout)
			}
		}})
}
