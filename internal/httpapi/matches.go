package httpapi

import (
	"context"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/matching"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// FindCriteria is the match search criteria of the API document (section
// 2), with paging in the same body.
type FindCriteria struct {
	Sports      []string `json:"sports,omitempty" maxItems:"20" example:"[\"tennis\"]" doc:"Sports to find partners for; default: your profile's sports"`
	SkillLevel  string   `json:"skill_level,omitempty" enum:"beginner,intermediate,advanced,expert" example:"intermediate" doc:"Candidates' level in the sport is at most one step from it; default: your own level in each sport (no filter for a sport without one)"`
	MaxDistance float64  `json:"max_distance,omitempty" exclusiveMinimum:"0" maximum:"1000" example:"15" doc:"Kilometres from you; default: your travel_radius_km"`
	Limit       int      `json:"limit,omitempty" minimum:"1" maximum:"100" example:"20" doc:"How many recommendations (1-100, default 20)"`
	Cursor      string   `json:"cursor,omitempty" maxLength:"200" doc:"next_cursor of the previous page"`
}

// Reason is one factor of a compatibility score.
type Reason struct {
	Factor  string `json:"factor" enum:"sports,skill,distance,availability,activity"`
	ForYou  int    `json:"for_you" minimum:"0" maximum:"100" doc:"How well they suit you on this factor (0-100)"`
	ForThem int    `json:"for_them" minimum:"0" maximum:"100" doc:"How well you suit them on this factor (0-100)"`
	Detail  string `json:"detail" example:"1 sport(s) in common: tennis"`
}

// Recommendation is one person found by a match search.
type Recommendation struct {
	Object             string        `json:"object" enum:"recommendation"`
	User               PublicProfile `json:"user"`
	CompatibilityScore int           `json:"compatibility_score" minimum:"0" maximum:"100" example:"82"`
	CommonSports       []string      `json:"common_sports" example:"[\"tennis\"]"`
	DistanceKM         int           `json:"distance_km" example:"3" doc:"Rounded to whole kilometres; positions are never shown"`
	Reasons            []Reason      `json:"reasons" doc:"The factors of the score, from both sides"`
}

func recommendationOf(c *matching.Candidate) Recommendation {
	r := Recommendation{Object: "recommendation", User: publicProfileOf(c.User), CompatibilityScore: c.Result.Score,
		CommonSports: append([]string{}, c.Result.Common...), DistanceKM: c.DistanceKM}
	for _, x := range c.Result.Reasons {
		r.Reasons = append(r.Reasons, Reason(x))
	}
	return r
}

// Match is a match request and where it stands.
type Match struct {
	Object             string   `json:"object" enum:"match"`
	ID                 string   `json:"id" example:"mch_068ay3yzbf8z1rmbn3y0p6fs2g"`
	User1ID            string   `json:"user1_id" doc:"Who sent the request"`
	User2ID            string   `json:"user2_id" doc:"Who was invited"`
	CompatibilityScore int      `json:"compatibility_score" minimum:"0" maximum:"100" doc:"The pair's score when the request was sent"`
	CommonSports       []string `json:"common_sports"`
	Sport              *string  `json:"sport" doc:"The sport asked for, if one was"`
	Message            string   `json:"message" doc:"The requester's message"`
	Status             string   `json:"status" enum:"pending,accepted,declined,expired,cancelled"`
	CreatedAt          string   `json:"created_at" format:"date-time"`
	UpdatedAt          string   `json:"updated_at" format:"date-time"`
	ExpiresAt          string   `json:"expires_at" format:"date-time" doc:"When a pending request expires"`
	AcceptedAt         *string  `json:"accepted_at" format:"date-time"`
	DeclinedAt         *string  `json:"declined_at" format:"date-time"`
	ExpiredAt          *string  `json:"expired_at" format:"date-time"`
	CancelledAt        *string  `json:"cancelled_at" format:"date-time"`
}

func matchOf(m *matching.Match) Match {
	out := Match{Object: "match", ID: m.ID, User1ID: m.User1ID, User2ID: m.User2ID, CompatibilityScore: m.Score,
		CommonSports: append([]string{}, m.Common...), Message: m.Message, Status: m.Status,
		CreatedAt: wire.Time(m.CreatedAt), UpdatedAt: wire.Time(m.UpdatedAt), ExpiresAt: wire.Time(m.ExpiresAt)}
	if m.Sport != "" {
		out.Sport = &m.Sport
	}
	closed := wire.OptTime(m.ClosedAt)
	switch m.Status {
	case matching.StatusAccepted:
		out.AcceptedAt = closed
	case matching.StatusDeclined:
		out.DeclinedAt = closed
	case matching.StatusExpired:
		out.ExpiredAt = closed
	case matching.StatusCancelled:
		out.CancelledAt = closed
	}
	return out
}

// Tally counts matches by status.
type Tally struct {
	Total     int `json:"total"`
	Pending   int `json:"pending"`
	Accepted  int `json:"accepted"`
	Declined  int `json:"declined"`
	Expired   int `json:"expired"`
	Cancelled int `json:"cancelled"`
}

// SportCount is a sport and how many accepted matches share it.
type SportCount struct {
	Sport string `json:"sport"`
	Count int    `json:"count"`
}

// MatchStats are your match history in figures.
type MatchStats struct {
	Object                 string       `json:"object" enum:"match_stats"`
	Sent                   Tally        `json:"sent" doc:"Requests you sent"`
	Received               Tally        `json:"received" doc:"Requests you received"`
	AcceptanceRateSent     *float64     `json:"acceptance_rate_sent" doc:"Of your requests that were answered or expired, the share accepted (null before any)"`
	AcceptanceRateReceived *float64     `json:"acceptance_rate_received" doc:"Of the requests you received that were answered or expired, the share you accepted"`
	AverageScoreAccepted   *float64     `json:"average_score_accepted" doc:"Mean compatibility score of your accepted matches"`
	TopSports              []SportCount `json:"top_sports" doc:"The sports most shared in your accepted matches, at most 5"`
}

func rate(t matching.Tally) *float64 {
	n := t.Accepted + t.Declined + t.Expired
	if n == 0 {
		return nil
	}
	r := float64(t.Accepted) / float64(n)
	return &r
}

type matchOut struct{ Body Match }

type matchIn struct {
	ID string `path:"id" maxLength:"64" doc:"mch_..."`
}

func (s *server) registerMatches() {
	tags := []string{"Matching"}
	cfg := s.matching.Settings()
	huma.Register(s.api, huma.Operation{
		OperationID: "find-matches", Method: http.MethodPost, Path: "/v1/matches/find", Tags: tags,
		Summary: "Find people to play with",
		Description: "Personalised recommendations, best first (compatibility_score descending, then distance, then user id).\n\n" +
			"**Hard filters**: a candidate plays one of the requested sports; is within max_distance of you and you are within their own travel radius; " +
			"has a skill level in that sport at most one step from skill_level (or has stated none); appears in match results (privacy.discoverable, " +
			"profile_visibility members); is not you, not blocked either way, has no pending or accepted match with you, and no match with you declined in the last " +
			fmt.Sprintf("%d days. ", int(cfg.DeclineCooldown.Hours()/24)) +
			fmt.Sprintf("A candidate shown to you %d times without either of you acting (a match request, a block) is held back for %d days. ", cfg.SuppressAfter, int(cfg.SuppressFor.Hours()/24)) +
			fmt.Sprintf("People holding %d or more unanswered requests are not recommended until they answer some, so nobody is flooded. ", cfg.PendingCap) +
			fmt.Sprintf("The nearest %d index rows (one per person and sport) within max_distance are scored.\n\n", cfg.Candidates) +
			"**Score**: " + matching.ScoreFormula + " Each recommendation lists these factors in reasons.\n\n" +
			"You need a position: set location (a place name, resolved offline) or latitude and longitude on your profile; without one the answer is 422 location_required. " +
			"Distances are whole kilometres; nobody's position is ever returned. Scope: matching.",
		Security: requires(auth.ScopeMatching),
	}, func(ctx context.Context, in *struct{ Body FindCriteria }) (*struct{ Body List[Recommendation] }, error) {
		limit := in.Body.Limit
		if limit == 0 {
			limit = 20
		}
		found, more, err := s.matching.Find(ctx, principalOf(ctx).UserID, matching.Criteria{Sports: in.Body.Sports,
			SkillLevel: in.Body.SkillLevel, MaxDistance: in.Body.MaxDistance, Limit: limit, Cursor: in.Body.Cursor})
		if err != nil {
			return nil, err
		}
		out := List[Recommendation]{Object: "list", Data: make([]Recommendation, len(found)), HasMore: more}
		for i, c := range found {
			out.Data[i] = recommendationOf(c)
		}
		if more && len(found) > 0 {
			out.NextCursor = matching.CursorOf(found[len(found)-1])
		}
		return &struct{ Body List[Recommendation] }{Body: out}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "create-match", Method: http.MethodPost, Path: "/v1/matches", Tags: tags,
		Summary: "Send a match request",
		Description: "Asks user_id to play. The match records the pair's compatibility_score and common_sports at this moment, is pending, " +
			fmt.Sprintf("and expires after %d days without an answer. ", int(cfg.RequestTTL.Hours()/24)) +
			"Records match.created (to both people's webhooks) and notifies the invited person. " +
			"404 for someone you may not see (or who blocked you, or whom you blocked); 409 match_exists while a pending or accepted match " +
			"between you exists; 409 recently_declined within 30 days of a decline; 422 no_common_sport. Scope: matching.",
		Security:      requires(auth.ScopeMatching),
		DefaultStatus: http.StatusCreated,
	}, func(ctx context.Context, in *struct {
		Body struct {
			UserID  string `json:"user_id" maxLength:"64" example:"usr_068ay3yzbf8z1rmbn3y0p6fs2g" doc:"Whom to ask"`
			Sport   string `json:"sport,omitempty" maxLength:"100" example:"tennis" doc:"A sport you both play"`
			Message string `json:"message,omitempty" maxLength:"500" example:"Fancy a game on Saturday morning?"`
		}
	}) (*struct {
		Location string `header:"Location"`
		Body     Match
	}, error) {
		m, err := s.matching.Create(ctx, principalOf(ctx).UserID, matching.Request{UserID: in.Body.UserID, Sport: in.Body.Sport, Message: in.Body.Message})
		if err != nil {
			return nil, err
		}
		return &struct {
			Location string `header:"Location"`
			Body     Match
		}{Location: "/v1/matches/" + m.ID, Body: matchOf(m)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "list-matches", Method: http.MethodGet, Path: "/v1/matches", Tags: tags,
		Summary:     "Your match history",
		Description: "Matches you sent or received, newest first. Matches with someone blocked either way are left out. Scope: matching.",
		Security:    requires(auth.ScopeMatching),
	}, func(ctx context.Context, in *struct {
		ListParams
		Status string `query:"status" enum:"pending,accepted,declined,expired,cancelled" doc:"Only matches in this status"`
		Role   string `query:"role" enum:"sent,received" doc:"sent: requests you made; received: requests made to you"`
	}) (*struct{ Body List[Match] }, error) {
		if !validCursor("mch_", in.Cursor) {
			return nil, apperr.InvalidParam("cursor", "invalid_cursor", "cursor is not one this list returned")
		}
		ms, err := s.matching.List(ctx, principalOf(ctx).UserID, matching.ListFilter{Status: in.Status, Role: in.Role, Before: in.Cursor, Limit: in.Limit + 1})
		if err != nil {
			return nil, err
		}
		return &struct{ Body List[Match] }{Body: listOf(ms, in.Limit, func(m *matching.Match) string { return m.ID }, matchOf)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "match-stats", Method: http.MethodGet, Path: "/v1/matches/stats", Tags: tags,
		Summary:     "Your match statistics",
		Description: "Requests sent and received by status, acceptance rates both ways, the average score of accepted matches and the sports most shared in them. Scope: matching.",
		Security:    requires(auth.ScopeMatching),
	}, func(ctx context.Context, _ *struct{}) (*struct{ Body MatchStats }, error) {
		st, err := s.matching.Stats(ctx, principalOf(ctx).UserID)
		if err != nil {
			return nil, err
		}
		out := MatchStats{Object: "match_stats", Sent: Tally(st.Sent), Received: Tally(st.Received), AcceptanceRateSent: rate(st.Sent),
			AcceptanceRateReceived: rate(st.Received), AverageScoreAccepted: st.AverageScore, TopSports: []SportCount{}}
		for _, t := range st.TopSports {
			out.TopSports = append(out.TopSports, SportCount(t))
		}
		return &struct{ Body MatchStats }{Body: out}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "get-match", Method: http.MethodGet, Path: "/v1/matches/{id}", Tags: tags,
		Summary:     "A match",
		Description: "Only the two people in a match see it; it is 404 for everyone else, and for the two while either blocks the other. Scope: matching.",
		Security:    requires(auth.ScopeMatching),
	}, func(ctx context.Context, in *matchIn) (*matchOut, error) {
		m, err := s.matching.Get(ctx, principalOf(ctx).UserID, in.ID)
		if err != nil {
			return nil, err
		}
		return &matchOut{Body: matchOf(m)}, nil
	})

	for _, op := range []struct {
		id, verb, summary, desc string
		do                      func(context.Context, string, string) (*matching.Match, error)
	}{
		{"accept-match", "accept", "Accept a match request", "The invited person accepts a pending request. Records match.accepted and notifies the requester. 403 not_invited for the requester; 409 match_not_pending once answered, expired or cancelled. Scope: matching.", s.matching.Accept},
		{"decline-match", "decline", "Decline a match request", "The invited person declines a pending request. Records match.declined and notifies the requester; neither is recommended to the other for 30 days. 403 not_invited for the requester; 409 match_not_pending. Scope: matching.", s.matching.Decline},
		{"cancel-match", "cancel", "Cancel your match request", "The requester takes back a pending request. The API document has no event kind for it, so none is recorded. 403 not_requester for the invited person; 409 match_not_pending. Scope: matching.", s.matching.Cancel},
	} {
		huma.Register(s.api, huma.Operation{
			OperationID: op.id, Method: http.MethodPost, Path: "/v1/matches/{id}/" + op.verb, Tags: tags,
			Summary: op.summary, Description: op.desc, Security: requires(auth.ScopeMatching),
		}, func(ctx context.Context, in *matchIn) (*matchOut, error) {
			m, err := op.do(ctx, principalOf(ctx).UserID, in.ID)
			if err != nil {
				return nil, err
			}
			return &matchOut{Body: matchOf(m)}, nil
		})
	}
}
