package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/sports"
)

// Sport is one entry of the list of known sports.
type Sport struct {
	Object string `json:"object" enum:"sport"`
	Name   string `json:"name" doc:"Canonical name, as profiles and events store it"`
}

func (s *server) registerSports() {
	huma.Register(s.api, huma.Operation{
		OperationID: "list-sports", Method: http.MethodGet, Path: "/v1/sports", Tags: []string{"Users and profiles"},
		Summary:     "The sports the platform knows",
		Description: "Input names are matched after folding case, spaces, hyphens and underscores, and common aliases are accepted (soccer -> football, ping pong -> table tennis). Scope: read.",
		Security:    requires(auth.ScopeRead),
	}, func(ctx context.Context, _ *struct{}) (*struct{ Body List[Sport] }, error) {
		all := sports.All()
		out := List[Sport]{Object: "list", Data: make([]Sport, len(all))}
		for i, n := range all {
			out.Data[i] = Sport{Object: "sport", Name: n}
		}
		return &struct{ Body List[Sport] }{Body: out}, nil
	})
}
