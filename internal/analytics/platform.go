package analytics

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
)

// PlatformDay is what the store counts for one UTC day, each from the
// domain's own rows, so the figures agree with what the API shows.
type PlatformDay struct {
	Start time.Time
	// Accounts created that day (the service's own account aside).
	Signups int64
	// Distinct users who made an API request that day, in the 7 days and
	// in the 30 days ending with it.
	ActiveUsers, WeeklyActive, MonthlyActive int64
	// Match requests sent that day; of those closed that day, how many
	// were accepted and how many were closed at all (accepted, declined,
	// expired or cancelled).
	MatchRequests, MatchesAccepted, MatchesClosed int64
	MessagesSent                                  int64
	EventsCreated, RSVPs, CheckIns                int64
	// Of the events starting that day where the organiser took attendance:
	// people answering going, and those of them checked in.
	AttendanceGoing, AttendedGoing int64
	// Webhook deliveries created that day (tests aside); of those finished
	// that day, succeeded and failed.
	WebhookDeliveries, WebhookSucceeded, WebhookFailed int64
}

// Rate is a share, nil when there is nothing to divide by.
func Rate(part, whole int64) *float64 {
	if whole == 0 {
		return nil
	}
	r := math.Round(float64(part)/float64(whole)*10000) / 10000
	return &r
}

// Platform reads the product metrics per day of r.
func (s *Service) Platform(ctx context.Context, r Range) ([]PlatformDay, error) {
	if r.Granularity != Day {
		return nil, apperr.InvalidParam("granularity", "invalid_granularity", "platform metrics are per day: granularity=day")
	}
	return s.store.Platform(ctx, r.From, r.To)
}

// MatchOutcome is one closed match request, with where its two people are.
type MatchOutcome struct {
	Sport    string
	Accepted bool
	// Distance between the two people's profile locations, nil when either
	// has none.
	DistanceKM *float64
}

// Outcomes counts closed match requests and accepted ones.
type Outcomes struct {
	Key              string // the sport, or the distance band
	Closed, Accepted int64
}

// MatchingReport is the acceptance of match requests by sport and by
// distance between the two people.
type MatchingReport struct {
	BySport, ByDistance []Outcomes
}

// Bands are the distance bands of the matching report, in km.
var Bands = []struct {
	Name     string
	Min, Max float64
}{{"0-5", 0, 5}, {"5-10", 5, 10}, {"10-25", 10, 25}, {"25+", 25, math.Inf(1)}}

// BandOf names the distance band of d ("unknown" without a distance).
func BandOf(d *float64) string {
	if d == nil {
		return "unknown"
	}
	for _, b := range Bands {
		if *d >= b.Min && *d < b.Max {
			return b.Name
		}
	}
	return Bands[len(Bands)-1].Name
}

// Matching reports acceptance in [r.From, r.To).
func (s *Service) Matching(ctx context.Context, r Range) (*MatchingReport, error) {
	outs, err := s.store.MatchOutcomes(ctx, r.From, r.To)
	if err != nil {
		return nil, err
	}
	sports := map[string]*Outcomes{}
	bands := map[string]*Outcomes{}
	for _, b := range Bands {
		bands[b.Name] = &Outcomes{Key: b.Name}
	}
	bands["unknown"] = &Outcomes{Key: "unknown"}
	for _, o := range outs {
		sp := o.Sport
		if sp == "" {
			sp = "unspecified"
		}
		if sports[sp] == nil {
			sports[sp] = &Outcomes{Key: sp}
		}
		for _, c := range []*Outcomes{sports[sp], bands[BandOf(o.DistanceKM)]} {
			c.Closed++
			if o.Accepted {
				c.Accepted++
			}
		}
	}
	rep := &MatchingReport{}
	for _, c := range sports {
		rep.BySport = append(rep.BySport, *c)
	}
	slices.SortFunc(rep.BySport, func(a, b Outcomes) int {
		if a.Key < b.Key {
			return -1
		}
		if a.Key > b.Key {
			return 1
		}
		return 0
	})
	for _, b := range Bands {
		rep.ByDistance = append(rep.ByDistance, *bands[b.Name])
	}
	rep.ByDistance = append(rep.ByDistance, *bands["unknown"])
	return rep, nil
}

// Activity is a user's own summary.
type Activity struct {
	MatchRequestsSent, MatchRequestsReceived, Matches int64
	MessagesSent                                      int64
	EventsCreated, EventsAttended                     int64
}

// Activity returns the user's own summary.
func (s *Service) Activity(ctx context.Context, userID string) (*Activity, error) {
	return s.store.Activity(ctx, userID, s.clock.Now())
}
