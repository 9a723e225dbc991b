package bench

import (
	"context"
	"errors"
	"flag"
	"io"
	"runtime"
	"time"
)

// Command is one `matchpoint bench <name>`: it registers its flags on the
// command's flag set and returns what runs once they are parsed. The CLI
// does the parsing, help and usage errors the same way for every bench.
type Command struct {
	Name    string
	Summary string // one line for `matchpoint bench --help`
	Flags   func(fs *flag.FlagSet) Run
}

// Run measures, printing progress on stderr and figures on stdout.
type Run func(ctx context.Context, stdout, stderr io.Writer) error

// Commands lists every bench, in the order help shows them.
var Commands []Command

func register(c Command) { Commands = append(Commands, c) }

// commonFlags registers the flags every service bench shares.
func commonFlags(fs *flag.FlagSet, o *Options) { engineFlags(fs, o, 8, "concurrent clients") }

func engineFlags(fs *flag.FlagSet, o *Options, clients int, usage string) {
	fs.StringVar(&o.DatabaseURL, "postgres", "", "postgres://... server to measure on (default: SQLite)")
	fs.IntVar(&o.Concurrency, "concurrency", clients, usage)
}

// latencyFlags are commonFlags for a command whose target is a latency:
// by default one client per core. The clients are closed-loop on the same
// cores as the service and its database, so with more of them than cores
// each request mostly waits behind the others and the p99 measures the
// queue (about clients/cores times the service time), not the service.
// --concurrency 8 shows that saturated case.
func latencyFlags(fs *flag.FlagSet, o *Options) {
	engineFlags(fs, o, runtime.NumCPU(), "concurrent clients (one per core by default, so that latency is not queueing; more measure saturation)")
}

func positive(vals ...int) error {
	for _, v := range vals {
		if v < 1 {
			return errors.New("counts and durations must be positive")
		}
	}
	return nil
}

func init() {
	register(Command{Name: "api", Summary: "requests/second of GET /v1/users/me with a bearer token, against a bare handler serving the same JSON in the same process",
		Flags: func(fs *flag.FlagSet) Run {
			o := Options{Duration: 3 * time.Second, Rounds: 3}
			commonFlags(fs, &o)
			fs.DurationVar(&o.Duration, "duration", o.Duration, "length of each measured round")
			fs.IntVar(&o.Rounds, "rounds", o.Rounds, "rounds of each configuration")
			return func(ctx context.Context, stdout, _ io.Writer) error {
				if err := positive(o.Concurrency, o.Rounds, int(o.Duration)); err != nil {
					return err
				}
				_, err := API(ctx, o, stdout)
				return err
			}
		}})
	register(Command{Name: "token", Summary: "grants/second of POST /oauth/token: code exchange and refresh",
		Flags: func(fs *flag.FlagSet) Run {
			o := Options{Grants: 1000}
			commonFlags(fs, &o)
			fs.IntVar(&o.Grants, "grants", o.Grants, "grants of each type")
			return func(ctx context.Context, stdout, _ io.Writer) error {
				if err := positive(o.Concurrency, o.Grants); err != nil {
					return err
				}
				_, err := Token(ctx, o, stdout)
				return err
			}
		}})
}

func init() {
	register(Command{Name: "fastpath", Summary: "requests/second of GET /v1/users/me with an API key, rate limits on, against GET /healthz, from outside a matchpoint serve process (target: a ratio of at least 0.5)",
		Flags: func(fs *flag.FlagSet) Run {
			o := Options{Duration: 3 * time.Second, Rounds: 3}
			commonFlags(fs, &o)
			fs.DurationVar(&o.Duration, "duration", o.Duration, "length of each measured round")
			fs.IntVar(&o.Rounds, "rounds", o.Rounds, "rounds of each configuration")
			fs.StringVar(&o.RedisURL, "redis", "", "redis://... to count rate limits in (default: in process)")
			fs.BoolVar(&o.InProcess, "inprocess", false, "serve from the bench process, so --cpuprofile profiles the service too")
			fs.BoolVar(&o.Wrk, "wrk", false, "generate the load with wrk (apt-get install wrk) instead of Go HTTP clients")
			fs.IntVar(&o.Keys, "keys", 1, "API keys (of as many accounts) the clients share round robin")
			return func(ctx context.Context, stdout, _ io.Writer) error {
				if err := positive(o.Concurrency, o.Rounds, int(o.Duration), o.Keys); err != nil {
					return err
				}
				_, err := FastPath(ctx, o, stdout)
				return err
			}
		}})
}
