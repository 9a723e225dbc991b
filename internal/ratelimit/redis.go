package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/matchpoint-api/matchpoint/internal/clock"
)

// redisScript is step and the bookkeeping of Allow in one atomic script, so
// concurrent requests on any number of nodes never read and write a bucket
// in between each other. The bucket is a hash {tat, e} that expires when it
// is full again. Time comes from the caller (the node's clock, which tests
// replace), in integer microseconds: Lua's numbers hold them exactly, and
// string.format("%d") writes them back without an exponent.
//
// KEYS[1] bucket; ARGV now, limit (clamped). Returns {allowed 0|1, tat,
// emission}.
var redisScript = redis.NewScript(`
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local t = math.floor(3600000000 / limit)
local tol = t * limit
local b = redis.call('HMGET', KEYS[1], 'tat', 'e')
local tat = tonumber(b[1]) or now
local e = tonumber(b[2]) or 0
if tat < now then tat = now end
if e ~= 0 and e ~= t and tat > now then
  local used = math.floor((tat - now + e - 1) / e)
  if used > limit then used = limit end
  tat = now + used * t
end
if tat + t - now > tol then
  if e ~= t then
    redis.call('HSET', KEYS[1], 'tat', string.format('%d', tat), 'e', t)
    redis.call('PEXPIRE', KEYS[1], math.ceil((tat - now) / 1000))
  end
  return {0, string.format('%d', tat), t}
end
tat = tat + t
redis.call('HSET', KEYS[1], 'tat', string.format('%d', tat), 'e', t)
redis.call('PEXPIRE', KEYS[1], math.ceil((tat - now) / 1000))
return {1, string.format('%d', tat), t}
`)

// ProbeEvery bounds how often a limiter whose Redis is unreachable tries it
// again: at most once per interval, and only while requests come in.
const ProbeEvery = time.Second

// Redis keeps the buckets in Redis, shared by every node. When Redis cannot
// be reached it counts in process instead (each node then applies the limits
// on its own), logs the outage once, and goes back to Redis when a probe,
// made at most every ProbeEvery, finds it answering again.
type Redis struct {
	client   *redis.Client
	prefix   string
	clock    clock.Clock
	log      *slog.Logger
	fallback *Local

	down      atomic.Bool
	mu        sync.Mutex // guards lastProbe and probing
	lastProbe time.Time
	probing   bool
	probes    sync.WaitGroup
}

// RedisOptions configure NewRedis.
type RedisOptions struct {
	URL    string // redis://[user:password@]host:port/db
	Prefix string // key prefix; default "matchpoint:ratelimit:"
	Clock  clock.Clock
	Logger *slog.Logger
}

// Timeouts of one call to Redis: a request never waits longer than this for
// its rate limit, and then counts locally. Only the requests in flight when
// Redis goes away wait: the next ones count locally at once. Shorter, and a
// busy machine's scheduling delays would pass for outages.
const redisTimeout = time.Second

// quietRedis takes the Redis client's own log lines (one per failed dial,
// every probe of an outage) down to debug level: the limiter logs an outage
// once, itself.
type quietRedis struct{}

func (quietRedis) Printf(ctx context.Context, format string, v ...any) {
	slog.Default().DebugContext(ctx, fmt.Sprintf(format, v...))
}

var quietOnce sync.Once

// NewRedis connects a Redis limiter. It does not fail when Redis is down:
// the service starts on local limits and moves to Redis when it answers.
func NewRedis(o RedisOptions) (*Redis, error) {
	opt, err := redis.ParseURL(o.URL)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: Redis URL: %w", err)
	}
	// Fail fast, once: a slow or absent Redis must cost a request at most
	// one short wait, after which the node counts locally.
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout, opt.PoolTimeout = redisTimeout, redisTimeout, redisTimeout, redisTimeout
	opt.MaxRetries, opt.DialerRetries = -1, 1
	opt.DisableIdentity = true
	quietOnce.Do(func() { redis.SetLogger(quietRedis{}) })
	if o.Prefix == "" {
		o.Prefix = "matchpoint:ratelimit:"
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Redis{client: redis.NewClient(opt), prefix: o.Prefix, clock: o.Clock, log: o.Logger, fallback: NewLocal(o.Clock)}, nil
}

// Allow counts one request of key in Redis, or locally while Redis is away.
func (r *Redis) Allow(ctx context.Context, key string, limit int64) (Decision, error) {
	if r.down.Load() {
		r.maybeProbe()
		return r.fallback.Allow(ctx, key, limit)
	}
	now, limit := r.clock.Now().UnixMicro(), clamp(limit)
	// The request's own cancellation must not pass for an outage.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), redisTimeout)
	defer cancel()
	res, err := redisScript.Run(cctx, r.client, []string{r.prefix + key}, now, limit).Int64Slice()
	if err != nil || len(res) != 3 {
		if err == nil {
			err = fmt.Errorf("unexpected reply %v", res)
		}
		r.wentDown(err)
		return r.fallback.Allow(ctx, key, limit)
	}
	s := state{tat: res[1], emission: res[2]}
	return decide(s, now, limit, res[0] == 1), nil
}

// wentDown switches to local counting, logging the outage once.
func (r *Redis) wentDown(err error) {
	r.mu.Lock()
	r.lastProbe = r.clock.Now()
	r.mu.Unlock()
	if r.down.CompareAndSwap(false, true) {
		r.log.Error("rate limits: Redis is unreachable; counting on this node alone until it is back",
			"error", err.Error(), "probe_every_ms", ProbeEvery.Milliseconds())
	}
}

// maybeProbe starts one probe of Redis, in the background, when the last was
// at least ProbeEvery ago; requests meanwhile go on counting locally.
func (r *Redis) maybeProbe() {
	now := r.clock.Now()
	r.mu.Lock()
	if r.probing || now.Sub(r.lastProbe) < ProbeEvery {
		r.mu.Unlock()
		return
	}
	r.probing, r.lastProbe = true, now
	r.probes.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.probes.Done()
		ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
		defer cancel()
		err := r.client.Ping(ctx).Err()
		r.mu.Lock()
		r.probing = false
		r.mu.Unlock()
		if err == nil && r.down.CompareAndSwap(true, false) {
			r.log.Info("rate limits: Redis is back; counting in Redis again")
		}
	}()
}

// Up reports whether counts go to Redis (false: local, Redis unreachable).
func (r *Redis) Up() bool { return !r.down.Load() }

// Ping checks that Redis answers now.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("ratelimit: Redis: %w", err)
	}
	return nil
}

// Close waits for a running probe and closes the connections.
func (r *Redis) Close() error {
	r.probes.Wait()
	err := r.client.Close()
	if errors.Is(err, redis.ErrClosed) {
		return nil
	}
	return err
}
