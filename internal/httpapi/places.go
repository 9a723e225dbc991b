package httpapi

import (
	"context"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/geo"
)

// Place is a populated place of the gazetteer.
type Place struct {
	Object      string  `json:"object" enum:"place"`
	Label       string  `json:"label" example:"Springfield, Illinois, United States" doc:"What to show and to send back as a profile's location"`
	Name        string  `json:"name" example:"Springfield"`
	Admin1      string  `json:"admin1" example:"IL" doc:"GeoNames code of the state or region"`
	Admin1Name  string  `json:"admin1_name,omitempty" example:"Illinois" doc:"Its name, where known (United States, Canada, Australia, Germany, United Kingdom)"`
	Country     string  `json:"country" example:"US" doc:"ISO 3166-1 alpha-2"`
	CountryName string  `json:"country_name" example:"United States"`
	Latitude    float64 `json:"latitude" example:"39.802" doc:"Of the place, never of a person"`
	Longitude   float64 `json:"longitude" example:"-89.644"`
	Population  int     `json:"population" example:"116250"`
	Timezone    string  `json:"timezone" example:"America/Chicago"`
}

func placeOf(p geo.Place) Place {
	return Place{Object: "place", Label: p.Label(), Name: p.Name, Admin1: p.Admin1, Admin1Name: p.Admin1Name, Country: p.Country,
		CountryName: p.CountryName, Latitude: p.Lat, Longitude: p.Lon, Population: p.Population, Timezone: p.Timezone}
}

func (s *server) registerPlaces() {
	huma.Register(s.api, huma.Operation{
		OperationID: "list-places", Method: http.MethodGet, Path: "/v1/places", Tags: []string{"Users and profiles"},
		Summary: "Autocomplete place names",
		Description: "Places whose name (or one of its other names, in any language, accents ignored) starts with q, most populous first. " +
			"Text after a comma narrows by country or state: `springf, il`, `paris, fr`. Send the chosen `label` as your profile's `location`: " +
			"without coordinates, the service resolves it to the place's position. Places are GeoNames' populated places of 1000 people or more " +
			"(CC BY, © GeoNames). The list is one page: it has no cursor. Scope: read.",
		Security: requires(auth.ScopeRead),
	}, func(ctx context.Context, in *struct {
		Q     string `query:"q" required:"true" minLength:"1" maxLength:"200" example:"springf, il" doc:"What the person has typed"`
		Limit int    `query:"limit" minimum:"1" maximum:"20" default:"10" doc:"How many places (1-20)"`
	}) (*struct{ Body List[Place] }, error) {
		if !utf8.ValidString(in.Q) || strings.ContainsRune(in.Q, 0) {
			return nil, &apperr.Error{Kind: apperr.BadRequest, Code: "invalid_request", Param: "q", Message: "q must be valid UTF-8 without NUL"}
		}
		found := s.places().Complete(in.Q, in.Limit)
		out := List[Place]{Object: "list", Data: make([]Place, len(found))}
		for i, p := range found {
			out.Data[i] = placeOf(p)
		}
		return &struct{ Body List[Place] }{Body: out}, nil
	})
}
