package analytics

import (
	"math"
	"slices"
)

// Latencies are kept as a logarithmic sketch (the idea of DDSketch): a
// count per bin, where bin i holds the latencies in (γ^(i-1), γ^i]
// microseconds. Any quantile read back from the bins is within 2 % of the
// true value, and sketches merge by adding their bins, so the counts of
// several nodes, hours or credentials combine exactly in SQL with SUM.
const relativeAccuracy = 0.02

var (
	gamma    = (1 + relativeAccuracy) / (1 - relativeAccuracy)
	logGamma = math.Log(gamma)
)

// Bin returns the bin of a latency in microseconds (at least 1).
func Bin(us int64) int32 {
	if us < 1 {
		us = 1
	}
	return int32(math.Ceil(math.Log(float64(us)) / logGamma))
}

// binValue is the representative latency of bin i, in milliseconds: the
// point of the bin whose relative error to either edge is the accuracy.
func binValue(i int32) float64 {
	return 2 * math.Pow(gamma, float64(i)) / (gamma + 1) / 1000
}

// Sketch is a set of latency bins and their counts.
type Sketch map[int32]int64

// Add merges counts into the sketch.
func (s Sketch) Add(bin int32, n int64) { s[bin] += n }

// Quantile returns the latency in milliseconds below which a fraction q of
// the counted requests fall (0 for an empty sketch), rounded to 0.01 ms.
func (s Sketch) Quantile(q float64) float64 {
	var total int64
	for _, n := range s {
		total += n
	}
	if total == 0 {
		return 0
	}
	bins := make([]int32, 0, len(s))
	for b := range s {
		bins = append(bins, b)
	}
	slices.Sort(bins)
	// The rank of the quantile, counted from 1, as "nearest rank" does.
	rank := int64(math.Ceil(q * float64(total)))
	rank = max(rank, 1)
	var seen int64
	for _, b := range bins {
		seen += s[b]
		if seen >= rank {
			return math.Round(binValue(b)*100) / 100
		}
	}
	return math.Round(binValue(bins[len(bins)-1])*100) / 100
}
