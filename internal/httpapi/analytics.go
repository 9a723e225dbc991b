package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/analytics"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// setCaller remembers the request's principal for the access log and the
// request analytics, which run after the handler, outside its context.
func setCaller(ctx context.Context, p *auth.Principal) {
	if ri, ok := ctx.Value(routeKey).(*requestInfo); ok {
		ri.userID, ri.principal = p.UserID, p
	}
}

// countRequest adds a finished request to the request analytics: requests
// made with a valid credential, billed to its account. It is a map update
// in memory; the recorder adds the counts to the database in batches.
func (s *server) countRequest(ri *requestInfo, route string, status int, took time.Duration) {
	p := ri.principal
	if s.requests == nil || p == nil {
		return
	}
	cred := p.APIKeyID
	if cred == "" {
		cred = p.ClientID
	}
	account := p.AccountID
	if account == "" {
		account = p.UserID
	}
	s.requests.Record(account, cred, route, p.UserID, status, took)
}

const analyticsBeta = " Analytics are a BETA family: every response carries `Matchpoint-Maturity: beta`."

// UsageBucket is one line of the usage report.
type UsageBucket struct {
	Start     string  `json:"start" format:"date-time"`
	End       string  `json:"end" format:"date-time"`
	Group     string  `json:"group" doc:"The operation or credential of the line; empty without group_by"`
	Requests  int64   `json:"requests"`
	Errors4xx int64   `json:"errors_4xx"`
	Errors5xx int64   `json:"errors_5xx"`
	P50       float64 `json:"p50_ms" doc:"Latency percentiles in the service, within 2 %"`
	P95       float64 `json:"p95_ms"`
	P99       float64 `json:"p99_ms"`
}

// PlatformBucket is one day of product metrics.
type PlatformBucket struct {
	Start               string   `json:"start" format:"date-time"`
	End                 string   `json:"end" format:"date-time"`
	Signups             int64    `json:"signups"`
	ActiveUsers         int64    `json:"active_users" doc:"People who used the API that day"`
	WeeklyActiveUsers   int64    `json:"weekly_active_users" doc:"In the 7 days ending that day"`
	MonthlyActiveUsers  int64    `json:"monthly_active_users" doc:"In the 30 days ending that day"`
	MatchRequests       int64    `json:"match_requests" doc:"Match requests sent that day"`
	MatchesAccepted     int64    `json:"matches_accepted" doc:"Match requests accepted that day"`
	MatchAcceptanceRate *float64 `json:"match_acceptance_rate" doc:"Of the requests closed that day (accepted, declined, expired, cancelled), the share accepted; null if none"`
	MessagesSent        int64    `json:"messages_sent"`
	EventsCreated       int64    `json:"events_created"`
	RSVPs               int64    `json:"rsvps" doc:"RSVPs first given that day"`
	CheckIns            int64    `json:"checkins"`
	AttendanceRate      *float64 `json:"attendance_rate" doc:"Of the people going to events that started that day and took attendance, the share checked in; null if none"`
	WebhookDeliveries   int64    `json:"webhook_deliveries" doc:"Deliveries created that day, tests aside"`
	WebhookSuccessRate  *float64 `json:"webhook_success_rate" doc:"Of the deliveries finished that day, the share delivered; null if none"`
}

// Acceptance is the acceptance of the match requests of one sport or band.
type Acceptance struct {
	Sport          string   `json:"sport,omitempty"`
	Band           string   `json:"band,omitempty" doc:"Distance between the two people in km: 0-5, 5-10, 10-25, 25+, or unknown"`
	Closed         int64    `json:"closed" doc:"Requests closed in the range"`
	Accepted       int64    `json:"accepted"`
	AcceptanceRate *float64 `json:"acceptance_rate"`
}

// MatchingReport is the acceptance of match requests by sport and distance.
type MatchingReport struct {
	Object     string       `json:"object" enum:"matching_report"`
	From       string       `json:"from" format:"date-time"`
	To         string       `json:"to" format:"date-time"`
	BySport    []Acceptance `json:"by_sport"`
	ByDistance []Acceptance `json:"by_distance"`
}

// Activity is a person's own summary.
type Activity struct {
	Object                string   `json:"object" enum:"activity"`
	MatchRequestsSent     int64    `json:"match_requests_sent"`
	MatchRequestsReceived int64    `json:"match_requests_received"`
	Matches               int64    `json:"matches" doc:"Accepted matches"`
	MessagesSent          int64    `json:"messages_sent"`
	EventsCreated         int64    `json:"events_created"`
	EventsAttended        int64    `json:"events_attended" doc:"Check-ins"`
	Reliability           *float64 `json:"reliability" doc:"Share of the events you answered going (and attendance was taken) that you attended, over a year; null if none"`
}

// RangeParams are the time range of a report.
type RangeParams struct {
	From string `query:"from" format:"date-time" doc:"Start (RFC 3339), rounded down to the bucket; default: 24 hours or 30 days before to"`
	To   string `query:"to" format:"date-time" doc:"End, exclusive, rounded up to the bucket; default: the end of the current bucket"`
}

func platformOf(d analytics.PlatformDay) PlatformBucket {
	return PlatformBucket{Start: wire.Time(d.Start), End: wire.Time(d.Start.Add(24 * time.Hour)),
		Signups: d.Signups, ActiveUsers: d.ActiveUsers, WeeklyActiveUsers: d.WeeklyActive, MonthlyActiveUsers: d.MonthlyActive,
		MatchRequests: d.MatchRequests, MatchesAccepted: d.MatchesAccepted, MatchAcceptanceRate: analytics.Rate(d.MatchesAccepted, d.MatchesClosed),
		MessagesSent: d.MessagesSent, EventsCreated: d.EventsCreated, RSVPs: d.RSVPs, CheckIns: d.CheckIns,
		AttendanceRate:    analytics.Rate(d.AttendedGoing, d.AttendanceGoing),
		WebhookDeliveries: d.WebhookDeliveries, WebhookSuccessRate: analytics.Rate(d.WebhookSucceeded, d.WebhookSucceeded+d.WebhookFailed)}
}

func (s *server) registerAnalytics() {
	tags := []string{"Analytics"}
	huma.Register(s.api, huma.Operation{
		OperationID: "get-usage", Method: http.MethodGet, Path: "/v1/analytics/usage", Tags: tags,
		Summary: "Your account's API usage",
		Description: "Requests billed to your account (made with its API keys, or by its OAuth apps), per hour or day, " +
			"optionally per operation or credential, with errors and latency percentiles. Counts reach this report within " +
			"the flush interval (10 s by default). Buckets without requests are left out. Scope: read." + analyticsBeta,
		Security: requires(auth.ScopeRead),
	}, func(ctx context.Context, in *struct {
		RangeParams
		Granularity string `query:"granularity" enum:"hour,day" default:"hour"`
		GroupBy     string `query:"group_by" enum:"operation,credential" doc:"Split each bucket by operation or by credential"`
	}) (*struct{ Body List[UsageBucket] }, error) {
		p := principalOf(ctx)
		r, err := s.analytics.ParseRange(in.From, in.To, in.Granularity, analytics.Hour)
		if err != nil {
			return nil, err
		}
		rows, err := s.analytics.Usage(ctx, p.UserID, r, in.GroupBy)
		if err != nil {
			return nil, err
		}
		out := List[UsageBucket]{Object: "list", Data: make([]UsageBucket, 0, len(rows))}
		for _, b := range rows {
			out.Data = append(out.Data, UsageBucket{Start: wire.Time(b.Start), End: wire.Time(b.End), Group: b.Group,
				Requests: b.Requests, Errors4xx: b.Errors4xx, Errors5xx: b.Errors5xx, P50: b.P50, P95: b.P95, P99: b.P99})
		}
		return &struct{ Body List[UsageBucket] }{out}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "get-platform-metrics", Method: http.MethodGet, Path: "/v1/analytics/platform", Tags: tags,
		Summary: "Product metrics of the platform (operators)",
		Description: "Per UTC day: sign-ups, active users, match requests and acceptance, messages, events, RSVPs, " +
			"check-ins and attendance, webhook deliveries and their success, each counted from the records the API serves. " +
			"At most 366 days. Scope: admin, on an operator account." + analyticsBeta,
		Security: requires(auth.ScopeAdmin),
	}, func(ctx context.Context, in *struct {
		RangeParams
		Granularity string `query:"granularity" enum:"day" default:"day"`
	}) (*struct{ Body List[PlatformBucket] }, error) {
		if _, err := operator(ctx); err != nil {
			return nil, err
		}
		r, err := s.analytics.ParseRange(in.From, in.To, in.Granularity, analytics.Day)
		if err != nil {
			return nil, err
		}
		days, err := s.analytics.Platform(ctx, r)
		if err != nil {
			return nil, err
		}
		out := List[PlatformBucket]{Object: "list", Data: make([]PlatformBucket, 0, len(days))}
		for _, d := range days {
			out.Data = append(out.Data, platformOf(d))
		}
		return &struct{ Body List[PlatformBucket] }{out}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "get-matching-metrics", Method: http.MethodGet, Path: "/v1/analytics/matching", Tags: tags,
		Summary: "Match acceptance by sport and distance (operators)",
		Description: "Of the match requests closed in the range (accepted, declined, expired or cancelled), how many were " +
			"accepted, per sport and per distance between the two people's profile locations. Default: the last 30 days. " +
			"Scope: admin, on an operator account." + analyticsBeta,
		Security: requires(auth.ScopeAdmin),
	}, func(ctx context.Context, in *RangeParams) (*struct{ Body MatchingReport }, error) {
		if _, err := operator(ctx); err != nil {
			return nil, err
		}
		r, err := s.analytics.ParseRange(in.From, in.To, analytics.Day, analytics.Day)
		if err != nil {
			return nil, err
		}
		rep, err := s.analytics.Matching(ctx, r)
		if err != nil {
			return nil, err
		}
		out := MatchingReport{Object: "matching_report", From: wire.Time(r.From), To: wire.Time(r.To),
			BySport: []Acceptance{}, ByDistance: []Acceptance{}}
		for _, o := range rep.BySport {
			out.BySport = append(out.BySport, Acceptance{Sport: o.Key, Closed: o.Closed, Accepted: o.Accepted, AcceptanceRate: analytics.Rate(o.Accepted, o.Closed)})
		}
		for _, o := range rep.ByDistance {
			out.ByDistance = append(out.ByDistance, Acceptance{Band: o.Key, Closed: o.Closed, Accepted: o.Accepted, AcceptanceRate: analytics.Rate(o.Accepted, o.Closed)})
		}
		return &struct{ Body MatchingReport }{out}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "get-my-activity", Method: http.MethodGet, Path: "/v1/users/me/activity", Tags: []string{"Users"},
		Summary:     "Your activity",
		Description: "Your match requests and matches, messages sent, events created and attended, and your reliability. Scope: read.",
		Security:    requires(auth.ScopeRead),
	}, func(ctx context.Context, _ *struct{}) (*struct{ Body Activity }, error) {
		p := principalOf(ctx)
		a, err := s.analytics.Activity(ctx, p.UserID)
		if err != nil {
			return nil, err
		}
		rel, err := s.events.Reliability(ctx, p.UserID)
		if err != nil {
			return nil, err
		}
		return &struct{ Body Activity }{Activity{Object: "activity", MatchRequestsSent: a.MatchRequestsSent,
			MatchRequestsReceived: a.MatchRequestsReceived, Matches: a.Matches, MessagesSent: a.MessagesSent,
			EventsCreated: a.EventsCreated, EventsAttended: a.EventsAttended, Reliability: rel.Score}}, nil
	})
}

// dashboardRoutes registers the developer dashboard's pages.
func (s *server) dashboardRoutes(mux *http.ServeMux) {
	for pattern, h := range map[string]http.Handler{
		"GET /dashboard":                                            s.web.Home(),
		"GET /dashboard/usage":                                      s.web.Usage(),
		"GET /dashboard/admin":                                      s.web.Admin(),
		"GET /dashboard/keys":                                       s.web.Keys(),
		"POST /dashboard/keys":                                      s.web.CreateKey(),
		"POST /dashboard/keys/{id}/revoke":                          s.web.RevokeKey(),
		"GET /dashboard/apps":                                       s.web.Apps(),
		"POST /dashboard/apps":                                      s.web.CreateApp(),
		"GET /dashboard/apps/{id}":                                  s.web.App(),
		"POST /dashboard/apps/{id}":                                 s.web.EditApp(),
		"POST /dashboard/apps/{id}/rotate":                          s.web.RotateApp(),
		"GET /dashboard/webhooks":                                   s.web.Webhooks(),
		"POST /dashboard/webhooks":                                  s.web.CreateWebhook(),
		"GET /dashboard/webhooks/{id}":                              s.web.Webhook(),
		"POST /dashboard/webhooks/{id}/{action}":                    s.web.WebhookAction(),
		"POST /dashboard/webhooks/{id}/deliveries/{delivery}/retry": s.web.RetryDelivery(),
	} {
		mux.Handle(pattern, route(pattern, h))
	}
}
