package web

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/analytics"
	"github.com/matchpoint-api/matchpoint/internal/webhooks"
)

// series reads an account's usage of the last n buckets, one point per
// bucket (zero where nothing was counted), oldest first.
func (p *Pages) series(ctx context.Context, account, granularity string, n int) ([]analytics.UsageBucket, error) {
	step := time.Hour
	if granularity == analytics.Day {
		step = 24 * time.Hour
	}
	to := p.now().Truncate(step).Add(step)
	r := analytics.Range{From: to.Add(-time.Duration(n) * step), To: to, Granularity: granularity}
	rows, err := p.dash.Analytics.Usage(ctx, account, r, analytics.ByNone)
	if err != nil {
		return nil, err
	}
	out := make([]analytics.UsageBucket, n)
	for i := range out {
		out[i] = analytics.UsageBucket{Start: r.From.Add(time.Duration(i) * step)}
		out[i].End = out[i].Start.Add(step)
	}
	for _, row := range rows {
		if i := int(row.Start.Sub(r.From) / step); i >= 0 && i < n {
			out[i] = row
		}
	}
	return out, nil
}

func requestPoints(bs []analytics.UsageBucket, layout string) []Point {
	pts := make([]Point, len(bs))
	for i, b := range bs {
		pts[i] = Point{Label: b.Start.Format(layout), Value: float64(b.Requests)}
	}
	return pts
}

// Home is /dashboard: the account, this hour against the rate limit, usage
// charts, the error rate and recent failures.
func (p *Pages) Home() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := p.signedIn(w, r)
		if !ok {
			return
		}
		ctx := r.Context()
		hours, err := p.series(ctx, v.User.ID, analytics.Hour, 24)
		if err != nil {
			p.serverError(w, r, err)
			return
		}
		days, err := p.series(ctx, v.User.ID, analytics.Day, 30)
		if err != nil {
			p.serverError(w, r, err)
			return
		}
		var total, errs int64
		for _, b := range hours {
			total += b.Requests
			errs += b.Errors4xx + b.Errors5xx
		}
		// Operations that failed in the last 24 hours, most failures first.
		to := p.now().Truncate(time.Hour).Add(time.Hour)
		ops, err := p.dash.Analytics.Usage(ctx, v.User.ID, analytics.Range{From: to.Add(-24 * time.Hour), To: to, Granularity: analytics.Day}, analytics.ByOperation)
		if err != nil {
			p.serverError(w, r, err)
			return
		}
		failing := map[string]*analytics.UsageBucket{}
		for _, o := range ops {
			if o.Errors4xx+o.Errors5xx == 0 {
				continue
			}
			if f := failing[o.Group]; f != nil {
				f.Requests, f.Errors4xx, f.Errors5xx = f.Requests+o.Requests, f.Errors4xx+o.Errors4xx, f.Errors5xx+o.Errors5xx
			} else {
				c := o
				failing[o.Group] = &c
			}
		}
		var failures []analytics.UsageBucket
		for _, f := range failing {
			failures = append(failures, *f)
		}
		slices.SortFunc(failures, func(a, b analytics.UsageBucket) int {
			return int((b.Errors4xx + b.Errors5xx) - (a.Errors4xx + a.Errors5xx))
		})
		subs, err := p.dash.Webhooks.List(ctx, v.Principal, "", 100)
		if err != nil {
			p.serverError(w, r, err)
			return
		}
		var unhealthy []*webhooks.Subscription
		for _, s := range subs {
			if st, _ := s.EffectiveStatus(); st == webhooks.StatusFailing || st == webhooks.StatusDisabled {
				unhealthy = append(unhealthy, s)
			}
		}
		thisHour := hours[len(hours)-1].Requests
		limit := v.User.HourlyLimit()
		p.page(w, r, v, http.StatusOK, "dash_home", "Dashboard", map[string]any{
			"ThisHour": thisHour, "Limit": limit, "LimitShare": float64(thisHour) / float64(max(limit, 1)),
			"Requests24h": total, "ErrorRate": analytics.Rate(errs, total),
			"HourChart": barChart("Requests per hour, last 24 hours", "requests", requestPoints(hours, "15:04")),
			"DayChart":  barChart("Requests per day, last 30 days", "requests", requestPoints(days, "Jan 2")),
			"Failures":  failures, "Unhealthy": unhealthy,
		})
	})
}

// Usage is /dashboard/usage: requests, errors and latency per operation or
// credential, per hour (the last 24) or day (the last 30).
func (p *Pages) Usage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := p.signedIn(w, r)
		if !ok {
			return
		}
		q := r.URL.Query()
		gran, by := q.Get("granularity"), q.Get("group_by")
		if gran != analytics.Day {
			gran = analytics.Hour
		}
		if by != analytics.ByCredential {
			by = analytics.ByOperation
		}
		step, n := time.Hour, 24
		if gran == analytics.Day {
			step, n = 24*time.Hour, 30
		}
		to := p.now().Truncate(step).Add(step)
		rng := analytics.Range{From: to.Add(-time.Duration(n) * step), To: to, Granularity: gran}
		rows, err := p.dash.Analytics.Usage(r.Context(), v.User.ID, rng, by)
		if err != nil {
			p.serverError(w, r, err)
			return
		}
		slices.Reverse(rows) // newest first
		// Requests per group over the whole range, for the chart.
		totals := map[string]float64{}
		for _, row := range rows {
			totals[row.Group] += float64(row.Requests)
		}
		var pts []Point
		for g, t := range totals {
			pts = append(pts, Point{Label: g, Value: t})
		}
		slices.SortFunc(pts, func(a, b Point) int {
			if a.Value != b.Value {
				if a.Value > b.Value {
					return -1
				}
				return 1
			}
			if a.Label < b.Label {
				return -1
			}
			return 1
		})
		p.page(w, r, v, http.StatusOK, "dash_usage", "Usage", map[string]any{
			"Rows": rows, "Granularity": gran, "GroupBy": by, "From": rng.From, "To": rng.To,
			"Chart": barChart("Requests per "+by+" over the range", "requests", pts),
		})
	})
}

// Admin is /dashboard/admin, for operators: the platform's product metrics
// of the last 30 days and match acceptance.
func (p *Pages) Admin() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := p.signedIn(w, r)
		if !ok {
			return
		}
		if !v.operator() {
			p.render(w, r, http.StatusNotFound, "error", map[string]any{"Title": "Not found", "Message": "There is no such page."})
			return
		}
		to := p.now().Truncate(24 * time.Hour).Add(24 * time.Hour)
		rng := analytics.Range{From: to.AddDate(0, 0, -30), To: to, Granularity: analytics.Day}
		days, err := p.dash.Analytics.Platform(r.Context(), rng)
		if err != nil {
			p.serverError(w, r, err)
			return
		}
		rep, err := p.dash.Analytics.Matching(r.Context(), rng)
		if err != nil {
			p.serverError(w, r, err)
			return
		}
		var signups, active []Point
		for _, d := range days {
			signups = append(signups, Point{Label: d.Start.Format("Jan 2"), Value: float64(d.Signups)})
			active = append(active, Point{Label: d.Start.Format("Jan 2"), Value: float64(d.ActiveUsers)})
		}
		slices.Reverse(days)
		p.page(w, r, v, http.StatusOK, "dash_admin", "Platform", map[string]any{
			"Days": days, "Matching": rep,
			"SignupChart": barChart("Sign-ups per day, last 30 days", "sign-ups", signups),
			"ActiveChart": barChart("Active users per day, last 30 days", "users", active),
		})
	})
}
