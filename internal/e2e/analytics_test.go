package e2e

import (
	"net/url"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/httpapi"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// usageQuery is the query of a usage report over the seed's day.
func usageQuery(day time.Time, granularity, groupBy string) string {
	q := url.Values{"from": {at(day)}, "to": {at(day.Add(24 * time.Hour))}, "granularity": {granularity}}
	if groupBy != "" {
		q.Set("group_by", groupBy)
	}
	return "/v1/analytics/usage?" + q.Encode()
}

// TestAnalyticsSeededScenario checks every analytics report against a
// scenario with known counts (apptest.SeedAnalytics), on each engine.
func TestAnalyticsSeededScenario(t *testing.T) {
	eachWebhookServer(t, "1s,1s", func(t *testing.T, s *apptest.Server, rcv *apptest.Receiver) {
		seed := s.SeedAnalytics(t, rcv)
		day, hour := wire.Time(seed.Day), wire.Time(seed.Day.Add(12*time.Hour))

		t.Run("usage per operation", func(t *testing.T) {
			r := api(t, s, "GET", usageQuery(seed.Day, "hour", "operation"), seed.KeyP1, "")
			if r.Header.Get("Matchpoint-Maturity") != "beta" {
				t.Errorf("Matchpoint-Maturity = %q", r.Header.Get("Matchpoint-Maturity"))
			}
			got := decode[httpapi.List[httpapi.UsageBucket]](t, r, 200)
			want := []struct {
				group          string
				requests, e4xx int64
			}{{"GET /v1/users/me", 5, 0}, {"GET /v1/users/me/verification", 2, 2}}
			if len(got.Data) != len(want) {
				t.Fatalf("usage = %+v, want %d lines", got.Data, len(want))
			}
			for i, w := range want {
				b := got.Data[i]
				if b.Start != hour || b.End != wire.Time(seed.Day.Add(13*time.Hour)) || b.Group != w.group || b.Requests != w.requests ||
					b.Errors4xx != w.e4xx || b.Errors5xx != 0 {
					t.Errorf("line %d = %+v, want %s %d requests %d 4xx in the hour %s", i, b, w.group, w.requests, w.e4xx, hour)
				}
				if b.P50 <= 0 || b.P50 > b.P95 || b.P95 > b.P99 {
					t.Errorf("line %d percentiles = %v %v %v", i, b.P50, b.P95, b.P99)
				}
			}
		})

		t.Run("usage per credential and day", func(t *testing.T) {
			got := decode[httpapi.List[httpapi.UsageBucket]](t, api(t, s, "GET", usageQuery(seed.Day, "day", "credential"), seed.KeyP1, ""), 200)
			counts := map[string][2]int64{}
			for _, b := range got.Data {
				if b.Start != day {
					t.Errorf("bucket %s, want the day %s", b.Start, day)
				}
				counts[b.Group] = [2]int64{b.Requests, b.Errors4xx}
			}
			want := map[string][2]int64{seed.KeyP1ID: {5, 2}, seed.AppP1: {2, 0}}
			if len(counts) != 2 || counts[seed.KeyP1ID] != want[seed.KeyP1ID] || counts[seed.AppP1] != want[seed.AppP1] {
				t.Errorf("per credential = %v, want %v", counts, want)
			}
			all := decode[httpapi.List[httpapi.UsageBucket]](t, api(t, s, "GET", usageQuery(seed.Day, "day", ""), seed.KeyP1, ""), 200)
			if len(all.Data) != 1 || all.Data[0].Requests != 7 || all.Data[0].Errors4xx != 2 || all.Data[0].Group != "" {
				t.Errorf("whole day = %+v, want 7 requests, 2 of them 4xx", all.Data)
			}
		})

		t.Run("usage is the caller's own", func(t *testing.T) {
			got := decode[httpapi.List[httpapi.UsageBucket]](t, api(t, s, "GET", usageQuery(seed.Day, "day", ""), seed.OperatorKey, ""), 200)
			if len(got.Data) != 1 || got.Data[0].Requests != 1 {
				t.Errorf("operator's usage = %+v, want its one request", got.Data)
			}
			got = decode[httpapi.List[httpapi.UsageBucket]](t, api(t, s, "GET", usageQuery(seed.Day, "day", ""), s.Key(t, seed.P3, "read"), ""), 200)
			if len(got.Data) != 0 {
				t.Errorf("another account sees %+v", got.Data)
			}
		})

		t.Run("platform", func(t *testing.T) {
			q := url.Values{"from": {day}, "to": {at(seed.Day.Add(24 * time.Hour))}}
			r := api(t, s, "GET", "/v1/analytics/platform?"+q.Encode(), seed.OperatorKey, "")
			if r.Header.Get("Matchpoint-Maturity") != "beta" {
				t.Errorf("Matchpoint-Maturity = %q", r.Header.Get("Matchpoint-Maturity"))
			}
			got := decode[httpapi.List[httpapi.PlatformBucket]](t, r, 200)
			if len(got.Data) != 1 {
				t.Fatalf("platform = %+v, want one day", got.Data)
			}
			d := got.Data[0]
			rate := func(p *float64) float64 {
				if p == nil {
					return -1
				}
				return *p
			}
			checks := []struct {
				name      string
				got, want float64
			}{
				{"signups", float64(d.Signups), 5},
				{"active_users", float64(d.ActiveUsers), 2},
				{"weekly_active_users", float64(d.WeeklyActiveUsers), 2},
				{"monthly_active_users", float64(d.MonthlyActiveUsers), 2},
				{"match_requests", float64(d.MatchRequests), 4},
				{"matches_accepted", float64(d.MatchesAccepted), 2},
				{"match_acceptance_rate", rate(d.MatchAcceptanceRate), 0.6667},
				{"messages_sent", float64(d.MessagesSent), 3},
				{"events_created", float64(d.EventsCreated), 2},
				{"rsvps", float64(d.RSVPs), 4},
				{"checkins", float64(d.CheckIns), 1},
				{"attendance_rate", rate(d.AttendanceRate), 0.5},
				{"webhook_deliveries", float64(d.WebhookDeliveries), 2},
				{"webhook_success_rate", rate(d.WebhookSuccessRate), 1},
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
				}
			}
			if d.Start != day {
				t.Errorf("start = %s, want %s", d.Start, day)
			}
		})

		t.Run("matching", func(t *testing.T) {
			q := url.Values{"from": {day}, "to": {at(seed.Day.Add(24 * time.Hour))}}
			got := decode[httpapi.MatchingReport](t, api(t, s, "GET", "/v1/analytics/matching?"+q.Encode(), seed.OperatorKey, ""), 200)
			type oc struct{ closed, accepted int64 }
			sports := map[string]oc{}
			for _, a := range got.BySport {
				sports[a.Sport] = oc{a.Closed, a.Accepted}
			}
			if len(sports) != 2 || sports["tennis"] != (oc{2, 1}) || sports["padel"] != (oc{1, 1}) {
				t.Errorf("by sport = %+v", got.BySport)
			}
			bands := map[string]oc{}
			for _, a := range got.ByDistance {
				bands[a.Band] = oc{a.Closed, a.Accepted}
			}
			want := map[string]oc{"0-5": {1, 1}, "5-10": {0, 0}, "10-25": {1, 0}, "25+": {1, 1}, "unknown": {0, 0}}
			for b, w := range want {
				if bands[b] != w {
					t.Errorf("band %s = %+v, want %+v (all: %+v)", b, bands[b], w, got.ByDistance)
				}
			}
		})

		t.Run("activity", func(t *testing.T) {
			got := decode[httpapi.Activity](t, api(t, s, "GET", "/v1/users/me/activity", seed.KeyP1, ""), 200)
			if got.MatchRequestsSent != 3 || got.MatchRequestsReceived != 0 || got.Matches != 2 || got.MessagesSent != 2 || got.EventsCreated != 2 || got.EventsAttended != 0 {
				t.Errorf("p1's activity = %+v", got)
			}
			got = decode[httpapi.Activity](t, api(t, s, "GET", "/v1/users/me/activity", s.Key(t, seed.P2, "read"), ""), 200)
			if got.MatchRequestsSent != 1 || got.MatchRequestsReceived != 1 || got.Matches != 1 || got.MessagesSent != 1 || got.EventsAttended != 1 {
				t.Errorf("p2's activity = %+v", got)
			}
		})

		t.Run("refusals", func(t *testing.T) {
			wantProblem(t, s, api(t, s, "GET", "/v1/analytics/platform", seed.KeyP1, ""), 403, "insufficient_scope", "")
			wantProblem(t, s, api(t, s, "GET", "/v1/analytics/matching", s.Key(t, seed.P1, "read"), ""), 403, "insufficient_scope", "")
			wantProblem(t, s, api(t, s, "GET", "/v1/analytics/usage?granularity=week", seed.KeyP1, ""), 422, "validation_failed", "granularity")
			wantProblem(t, s, api(t, s, "GET", "/v1/analytics/usage?from=yesterday", seed.KeyP1, ""), 422, "validation_failed", "from")
			wantProblem(t, s, api(t, s, "GET", "/v1/analytics/usage?granularity=day&from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z", seed.KeyP1, ""), 422, "range_too_long", "from")
			wantProblem(t, s, api(t, s, "GET", "/v1/analytics/usage", "", ""), 401, "unauthenticated", "")
		})
	})
}
