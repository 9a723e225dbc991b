// Package ratelimit counts requests against hourly allowances with GCRA (the
// generic cell rate algorithm, a token bucket kept as one timestamp): an
// allowance of L requests per hour is a bucket of capacity L refilled
// continuously at L/3600 per second. A fresh account can spend its whole
// hour at once, and since nothing is ever reset at a window boundary, no
// boundary lets twice the limit through.
//
// Counters live in process (Local) or in Redis (Redis, one atomic script per
// request, for several nodes). Both run the same arithmetic on the same
// integers, so they give the same answers.
package ratelimit

import (
	"context"
	"time"
)

// Period is the length of the allowances: limits are per hour.
const Period = time.Hour

// Limiter decides whether one more request of key fits within limit
// requests per Period. The limit is passed with every request, so a change of
// tier applies to the very next one.
type Limiter interface {
	Allow(ctx context.Context, key string, limit int64) (Decision, error)
}

// Decision is the answer for one request.
type Decision struct {
	Allowed   bool
	Limit     int64 // requests per Period
	Remaining int64 // requests that would still be allowed right now
	// RetryAfter is, when refused, how long until one request fits.
	RetryAfter time.Duration
	// NextAfter is how long until Remaining grows by one (when refused,
	// RetryAfter): the window within which no more than Remaining requests
	// will be allowed.
	NextAfter time.Duration
	// ResetAfter is how long until the whole allowance is back, at ResetAt.
	ResetAfter time.Duration
	ResetAt    time.Time
}

// The arithmetic runs on integer microseconds since the Unix epoch: exact,
// and within the 2^53 that Redis's Lua numbers hold exactly.

// maxLimit is one request per microsecond, the finest the buckets count.
const maxLimit = int64(Period / time.Microsecond)

// clamp keeps a limit within what the buckets count: 1 to maxLimit.
func clamp(limit int64) int64 { return min(max(limit, 1), maxLimit) }

// interval is the time one request costs: Period/limit.
func interval(limit int64) int64 { return maxLimit / limit }

// state is one key's bucket: tat, the theoretical arrival time, is when the
// bucket will be full again; emission is the interval tat was counted in.
type state struct {
	tat, emission int64
}

// step is GCRA for one request at now (µs). The bucket holds limit requests:
// its tolerance is limit*emission, and a request is allowed if counting it
// keeps tat within the tolerance of now. When the limit changed since the
// last request (a change of tier), the requests already counted are carried
// over into the new interval, capped at the new limit, so an upgrade adds
// its extra requests at once and a downgrade never waits more than an hour.
// The bucket is to be stored when the request is allowed or its interval
// changed. limit is clamped.
//
// redisScript below is this same function in Lua: change both together.
func step(s state, now, limit int64) (next state, allowed bool) {
	t := interval(limit)
	tol := t * limit
	tat := max(s.tat, now)
	if s.emission != 0 && s.emission != t && tat > now {
		used := (tat - now + s.emission - 1) / s.emission // requests counted, rounded up
		tat = now + min(used, limit)*t
	}
	if tat+t-now > tol {
		return state{tat: tat, emission: t}, false
	}
	return state{tat: tat + t, emission: t}, true
}

// decide turns a bucket after step into the decision's figures.
func decide(s state, now, limit int64, allowed bool) Decision {
	t := interval(limit)
	tol := t * limit
	used := max(s.tat-now, 0)
	d := Decision{Allowed: allowed, Limit: limit, ResetAfter: micros(used), ResetAt: time.UnixMicro(now + used).UTC()}
	if !allowed {
		d.RetryAfter = micros(s.tat + t - tol - now)
		d.NextAfter = d.RetryAfter
		return d
	}
	free := tol - used
	d.Remaining = free / t
	d.NextAfter = micros((d.Remaining+1)*t - free)
	return d
}

func micros(us int64) time.Duration { return time.Duration(us) * time.Microsecond }
