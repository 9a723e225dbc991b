package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/events"
)

// RecommendedEvent is an event recommended to the caller.
type RecommendedEvent struct {
	SportsEvent
	Score        float64 `json:"score" example:"0.82" doc:"How well the event fits you, 0..1: skill, distance, how soon, free places, your matches going"`
	MatchesGoing int     `json:"matches_going" example:"2" doc:"People you have an accepted match with who are going"`
}

// MyEvent is one of the caller's events.
type MyEvent struct {
	SportsEvent
	Role       string  `json:"role" enum:"creator,attendee"`
	RSVPStatus *string `json:"rsvp_status" enum:"going,waitlisted,maybe,not_going" doc:"Your answer; null if you have none"`
}

func (s *server) registerEventDiscovery(tags []string) {
	huma.Register(s.api, huma.Operation{
		OperationID: "list-events", Method: http.MethodGet, Path: "/v1/events", Tags: tags,
		Summary: "Find events",
		Description: "Scheduled events you may see, starting from `from` (default now). Filters combine: full-text `q` over title and " +
			"description (every word must match), `sport`, a date range, a place (`latitude` and `longitude`, or a `near` label the " +
			"service can place) within `radius_km` (default 25), free places, a skill level the event suits, a series. Sorted by " +
			"start time (default), distance (needs a place) or relevance (needs q). Scope: read or events.",
		Security: requires(auth.ScopeRead, auth.ScopeEvents),
	}, func(ctx context.Context, in *struct {
		ListParams
		Q            string                `query:"q" maxLength:"200" example:"doubles" doc:"Words to find in the title or description"`
		Sport        string                `query:"sport" maxLength:"100" example:"tennis"`
		From         eventParam[time.Time] `query:"from" doc:"Earliest start (RFC 3339); default now"`
		To           eventParam[time.Time] `query:"to" doc:"Start before this (RFC 3339)"`
		Latitude     eventParam[float64]   `query:"latitude" example:"45.76" doc:"Of the place to search near, with longitude"`
		Longitude    eventParam[float64]   `query:"longitude" example:"4.84"`
		Near         string                `query:"near" maxLength:"200" example:"Lyon" doc:"A place label instead of coordinates (422 coordinates_required when this server cannot place labels)"`
		RadiusKM     eventParam[float64]   `query:"radius_km" example:"10" doc:"Around the place, above 0 and at most 500; default 25"`
		HasFreeSpots eventParam[bool]      `query:"has_free_spots" doc:"true: only events with a place left; false: only full ones"`
		Skill        string                `query:"skill" enum:"beginner,intermediate,advanced,expert" doc:"Only events that suit this level"`
		SeriesID     string                `query:"series_id" maxLength:"64" doc:"Only occurrences of this series"`
		Sort         string                `query:"sort" enum:"start_time,distance,relevance" doc:"Default start_time"`
	}) (*struct{ Body List[SportsEvent] }, error) {
		pg, err := s.events.Search(ctx, principalOf(ctx).UserID, events.SearchParams{
			Text: in.Q, Sport: in.Sport, From: in.From.ptr(), To: in.To.ptr(), Latitude: in.Latitude.ptr(), Longitude: in.Longitude.ptr(),
			Near: in.Near, RadiusKM: in.RadiusKM.ptr(), FreeSpots: in.HasFreeSpots.ptr(), Skill: in.Skill, SeriesID: in.SeriesID,
			Sort: in.Sort, Cursor: in.Cursor, Limit: in.Limit,
		})
		if err != nil {
			return nil, err
		}
		out := List[SportsEvent]{Object: "list", Data: make([]SportsEvent, 0, len(pg.Items)), HasMore: pg.HasMore, NextCursor: pg.NextCursor}
		for _, f := range pg.Items {
			e := s.sportsEventOf(f.Event)
			e.DistanceKM = f.DistanceKM
			out.Data = append(out.Data, e)
		}
		return &struct{ Body List[SportsEvent] }{Body: out}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "recommended-events", Method: http.MethodGet, Path: "/v1/events/recommended", Tags: tags,
		Summary: "Events recommended for you",
		Description: "Upcoming events (next 60 days) within your profile's travel radius of your profile's coordinates, for your " +
			"sports, that you have not answered; best fit first, by skill, distance, how soon, free places and how many of your " +
			"accepted matches are going. 422 location_required when your profile has no coordinates. Scope: read or events.",
		Security: requires(auth.ScopeRead, auth.ScopeEvents),
	}, func(ctx context.Context, in *struct{ ListParams }) (*struct{ Body List[RecommendedEvent] }, error) {
		pg, err := s.events.Recommend(ctx, principalOf(ctx).UserID, in.Cursor, in.Limit)
		if err != nil {
			return nil, err
		}
		out := List[RecommendedEvent]{Object: "list", Data: make([]RecommendedEvent, 0, len(pg.Items)), HasMore: pg.HasMore, NextCursor: pg.NextCursor}
		for _, f := range pg.Items {
			e := s.sportsEventOf(f.Event)
			e.DistanceKM = f.DistanceKM
			out.Data = append(out.Data, RecommendedEvent{SportsEvent: e, Score: f.Score, MatchesGoing: f.MatchesGoing})
		}
		return &struct{ Body List[RecommendedEvent] }{Body: out}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "list-my-events", Method: http.MethodGet, Path: "/v1/users/me/events", Tags: tags,
		Summary: "Your events",
		Description: "Events you created or answered going, waitlisted or maybe: upcoming ones (not yet ended) soonest first, " +
			"or past ones latest first; cancelled ones included. Scope: read or events.",
		Security: requires(auth.ScopeRead, auth.ScopeEvents),
	}, func(ctx context.Context, in *struct {
		ListParams
		When string `query:"when" enum:"upcoming,past" default:"upcoming"`
		Role string `query:"role" enum:"creator,attendee" doc:"Only events you created, or only those you answered"`
	}) (*struct{ Body List[MyEvent] }, error) {
		list, next, err := s.events.MyEvents(ctx, principalOf(ctx).UserID, in.When != "past", in.Role, in.Cursor, in.Limit)
		if err != nil {
			return nil, err
		}
		out := List[MyEvent]{Object: "list", Data: make([]MyEvent, 0, len(list)), HasMore: next != "", NextCursor: next}
		for _, m := range list {
			item := MyEvent{SportsEvent: s.sportsEventOf(m.Event), Role: m.Role}
			if m.Status != "" {
				st := m.Status
				item.RSVPStatus = &st
			}
			out.Data = append(out.Data, item)
		}
		return &struct{ Body List[MyEvent] }{Body: out}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "get-my-reliability", Method: http.MethodGet, Path: "/v1/users/me/reliability", Tags: tags,
		Summary: "Your reliability",
		Description: "The share of events you attended among those you were going to over the last 12 months, counting events whose " +
			"organiser took attendance. Organisers see it for people who answer their events. Scope: read or events.",
		Security: requires(auth.ScopeRead, auth.ScopeEvents),
	}, func(ctx context.Context, _ *struct{}) (*struct{ Body EventReliability }, error) {
		r, err := s.events.Reliability(ctx, principalOf(ctx).UserID)
		if err != nil {
			return nil, err
		}
		return &struct{ Body EventReliability }{Body: *eventReliabilityOf(r)}, nil
	})
}
