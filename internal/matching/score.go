package matching

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// The compatibility score is reciprocal, as in reciprocal recommenders
// (Pizzato et al., RECON, RecSys 2010): how well B suits A and how well A
// suits B are scored apart, each in [0, 1], and combined with their harmonic
// mean, which is high only when both are. ScoreFormula is the documentation.
const ScoreFormula = "The compatibility score (0-100) is reciprocal: for two people A and B, " +
	"s(A→B) says how well B suits A and s(B→A) how well A suits B, and the score is " +
	"round(100 × 2·s(A→B)·s(B→A) / (s(A→B) + s(B→A))), their harmonic mean, high only when both are. " +
	"s(A→B) = 0.30·sports + 0.25·skill + 0.20·distance + 0.15·availability + 0.10·activity, where " +
	"sports = the share of A's sports that B plays; " +
	"skill = the mean over common sports of 1 − |level A − level B| / 3 (levels beginner=1 .. expert=4; 0.5 when neither states one); " +
	"distance = 1 − d / A's travel radius (at least 0); " +
	"availability = the share of A's weekly hours that B is also free, each person's slots read in their own time zone (0.5 when either has none); " +
	"activity = 0.5^(days since B was last active / 14). " +
	"The score of a pair is the same whichever of the two asks."

// Weights of the factors of one side.
const (
	wSports   = 0.30
	wSkill    = 0.25
	wDistance = 0.20
	wAvail    = 0.15
	wActivity = 0.10
	// activityHalfLife is how long until activity counts half.
	activityHalfLife = 14 * 24 * time.Hour
)

// Reason is one factor of a score, seen from both sides.
type Reason struct {
	Factor  string // sports, skill, distance, availability, activity
	ForYou  int    // 0-100: how well the other person suits you on this factor
	ForThem int    // 0-100: how well you suit them
	Detail  string
}

// Result is the score of a pair.
type Result struct {
	Score      int
	Common     []string // common sports, sorted
	DistanceKM float64
	Reasons    []Reason // filled by Explain
	// AB and BA are the two sides, for tests and the quality check.
	AB, BA float64

	// The factors of each side, for Explain.
	sportsA, sportsB, skill, distA, distB, availA, availB, actA, actB float64
	rated, hours                                                      int
	statedA, statedB                                                  bool
}

// Score rates the pair (a, b) from a's point of view at time now. It builds
// no text: searches score many candidates and explain only those they show.
func Score(a, b *Profile, now time.Time) Result { return score(a, b, now, true) }

// score is Score; without list, Common stays empty: the list is the one
// allocation of a score, and a search ranks many candidates but shows only
// a page of them, which it scores again in full (the same arithmetic, so the
// same figures).
func score(a, b *Profile, now time.Time, list bool) Result {
	var r Result
	var buf [8]string
	common := buf[:0]
	for s := range a.Levels {
		if _, ok := b.Levels[s]; ok {
			common = append(common, s)
		}
	}
	slices.Sort(common)
	if list && len(common) > 0 {
		r.Common = slices.Clone(common)
	}
	share := func(n int) float64 {
		if n == 0 {
			return 0
		}
		return float64(len(common)) / float64(n)
	}
	r.sportsA, r.sportsB = share(len(a.Levels)), share(len(b.Levels))

	for _, s := range common {
		la, lb := a.Levels[s], b.Levels[s]
		if la > 0 && lb > 0 {
			r.skill += 1 - math.Abs(float64(la-lb))/3
			r.rated++
		}
	}
	if r.rated > 0 {
		r.skill /= float64(r.rated)
	} else {
		r.skill = 0.5
	}

	r.DistanceKM = DistanceKM(a.Lat, a.Lon, b.Lat, b.Lon)
	near := func(radius float64) float64 {
		if radius <= 0 {
			return 0
		}
		return math.Max(0, 1-r.DistanceKM/radius)
	}
	r.distA, r.distB = near(a.RadiusKM), near(b.RadiusKM)

	r.hours = a.Week.And(b.Week).Hours()
	r.availA, r.availB = 0.5, 0.5
	ha, hb := a.Week.Hours(), b.Week.Hours()
	r.statedA, r.statedB = ha > 0, hb > 0
	if ha > 0 && hb > 0 {
		r.availA, r.availB = float64(r.hours)/float64(ha), float64(r.hours)/float64(hb)
	}

	activity := func(p *Profile) float64 {
		age := now.Sub(p.ActiveAt)
		if age < 0 {
			age = 0
		}
		return math.Exp2(-float64(age) / float64(activityHalfLife))
	}
	r.actB, r.actA = activity(b), activity(a) // what A gets from B's activity, and B from A's

	r.AB = wSports*r.sportsA + wSkill*r.skill + wDistance*r.distA + wAvail*r.availA + wActivity*r.actB
	r.BA = wSports*r.sportsB + wSkill*r.skill + wDistance*r.distB + wAvail*r.availB + wActivity*r.actA
	if r.AB+r.BA > 0 {
		r.Score = int(math.Round(100 * 2 * r.AB * r.BA / (r.AB + r.BA)))
	}
	return r
}

// Explain fills Reasons: each factor from both sides, with a sentence. b is
// the other person (whose last activity it describes).
func (r *Result) Explain(b *Profile, now time.Time) {
	pct := func(x float64) int { return int(math.Round(100 * x)) }
	sportsDetail := "no sport in common"
	if len(r.Common) > 0 {
		sportsDetail = fmt.Sprintf("%d sport(s) in common: %s", len(r.Common), strings.Join(r.Common, ", "))
	}
	skillDetail := "no skill levels to compare"
	if r.rated > 0 {
		skillDetail = fmt.Sprintf("skill levels compared in %d common sport(s)", r.rated)
	}
	availDetail := "availability not stated by both"
	if r.statedA && r.statedB {
		availDetail = fmt.Sprintf("%d hour(s) a week free at the same time", r.hours)
	}
	r.Reasons = []Reason{
		{"sports", pct(r.sportsA), pct(r.sportsB), sportsDetail},
		{"skill", pct(r.skill), pct(r.skill), skillDetail},
		{"distance", pct(r.distA), pct(r.distB), fmt.Sprintf("about %d km apart", RoundKM(r.DistanceKM))},
		{"availability", pct(r.availA), pct(r.availB), availDetail},
		{"activity", pct(r.actB), pct(r.actA), activityDetail(now.Sub(b.ActiveAt))},
	}
}

func activityDetail(age time.Duration) string {
	switch days := int(age.Hours() / 24); {
	case days < 1:
		return "active today"
	case days < 7:
		return "active this week"
	case days < 31:
		return fmt.Sprintf("last active %d days ago", days)
	default:
		return "not active for more than a month"
	}
}

// RoundKM rounds a distance to whole kilometres: positions are never shown,
// and distances no finer than this.
func RoundKM(d float64) int { return int(math.Round(d)) }
