package apptest

import (
	"context"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/matching"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// Player describes a sports profile for matching tests.
type Player struct {
	Sports       []string
	Levels       map[string]string
	Lat, Lon     float64 // both zero: no coordinates
	Location     string  // resolved by the gazetteer when Lat and Lon are zero
	RadiusKM     float64 // default 25
	Timezone     string
	Availability []users.Slot
	Privacy      *users.PrivacyPatch
}

// Player registers an account and gives it the sports profile p.
func (s *Server) Player(t testing.TB, username string, p Player) *users.User {
	t.Helper()
	u := s.User(t, username)
	patch := users.Patch{Sports: &p.Sports, SkillLevels: &p.Levels, Availability: &p.Availability, Privacy: p.Privacy}
	if p.Levels == nil {
		patch.SkillLevels = nil
	}
	if p.Lat != 0 || p.Lon != 0 {
		patch.Latitude = users.Nullable[float64]{Set: true, Value: p.Lat}
		patch.Longitude = users.Nullable[float64]{Set: true, Value: p.Lon}
	}
	if p.Location != "" {
		patch.Location = &p.Location
	}
	if p.RadiusKM != 0 {
		patch.TravelRadiusKM = &p.RadiusKM
	}
	if p.Timezone != "" {
		patch.Timezone = &p.Timezone
	}
	u, err := s.App.Users.Update(context.Background(), u.ID, patch)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Match makes a match request from a to b and, if accept, has b accept it.
func (s *Server) Match(t testing.TB, a, b *users.User, accept bool) *matching.Match {
	t.Helper()
	ctx := context.Background()
	m, err := s.App.Matching.Create(ctx, a.ID, matching.Request{UserID: b.ID})
	if err != nil {
		t.Fatal(err)
	}
	if accept {
		if m, err = s.App.Matching.Accept(ctx, b.ID, m.ID); err != nil {
			t.Fatal(err)
		}
	}
	return m
}
