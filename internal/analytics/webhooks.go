package analytics

import (
	"context"
	"math"
	"slices"
	"time"
)

// AttemptBounds are the upper bounds, in ms, of the latency classes that
// webhook attempts are counted in for charts (the last class is open).
var AttemptBounds = []float64{1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 15000}

// AttemptClass counts one hour's attempts of one latency class.
type AttemptClass struct {
	Start     time.Time
	Class     int // index in AttemptBounds; len(AttemptBounds) past the last
	Attempts  int64
	Succeeded int64
}

// AttemptHour is one hour of an endpoint's delivery attempts.
type AttemptHour struct {
	Start         time.Time
	Attempts      int64
	SuccessRate   *float64
	P50, P95, P99 float64 // ms, the upper bound of the class holding the rank; NaN without attempts
}

// WebhookHours reads an endpoint's attempts per hour over r: how many, the
// share that succeeded, and latency percentiles, for the dashboard's
// charts. The caller checks the endpoint is the viewer's.
func (s *Service) WebhookHours(ctx context.Context, subscriptionID string, from, to time.Time) ([]AttemptHour, error) {
	classes, err := s.store.WebhookAttempts(ctx, subscriptionID, from, to)
	if err != nil {
		return nil, err
	}
	var out []AttemptHour
	index := map[int64]int{}
	for t := from; t.Before(to); t = t.Add(time.Hour) {
		index[t.Unix()] = len(out)
		out = append(out, AttemptHour{Start: t, P50: math.NaN(), P95: math.NaN(), P99: math.NaN()})
	}
	hist := make([][]int64, len(out))
	succeeded := make([]int64, len(out))
	for _, c := range classes {
		i, ok := index[c.Start.Unix()]
		if !ok {
			continue
		}
		if hist[i] == nil {
			hist[i] = make([]int64, len(AttemptBounds)+1)
		}
		hist[i][min(c.Class, len(AttemptBounds))] += c.Attempts
		out[i].Attempts += c.Attempts
		succeeded[i] += c.Succeeded
	}
	for i := range out {
		if out[i].Attempts == 0 {
			continue
		}
		rate := float64(succeeded[i]) / float64(out[i].Attempts)
		out[i].SuccessRate = &rate
		out[i].P50, out[i].P95, out[i].P99 = classQuantile(hist[i], 0.5), classQuantile(hist[i], 0.95), classQuantile(hist[i], 0.99)
	}
	return out, nil
}

func classQuantile(h []int64, q float64) float64 {
	var total int64
	for _, n := range h {
		total += n
	}
	rank := max(int64(math.Ceil(q*float64(total))), 1)
	var seen int64
	for i, n := range h {
		seen += n
		if seen >= rank {
			return AttemptBounds[min(i, len(AttemptBounds)-1)]
		}
	}
	return slices.Max(AttemptBounds)
}
