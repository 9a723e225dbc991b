package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/moderation"
	"github.com/matchpoint-api/matchpoint/internal/users"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// Slot is a weekly availability window in the profile's time zone.
type Slot struct {
	Day   string `json:"day" enum:"monday,tuesday,wednesday,thursday,friday,saturday,sunday"`
	Start string `json:"start" pattern:"^[0-2][0-9]:[0-5][0-9]$" example:"18:00" doc:"HH:MM"`
	End   string `json:"end" pattern:"^[0-2][0-9]:[0-5][0-9]$" example:"21:00" doc:"HH:MM, after start"`
}

// Privacy is who sees what of a profile.
type Privacy struct {
	ProfileVisibility string `json:"profile_visibility" enum:"members,matches,private" doc:"members: every signed-in user; matches: only people with an accepted match with you; private: only you"`
	Discoverable      bool   `json:"discoverable" doc:"Whether you appear in match results"`
	ShowLocation      bool   `json:"show_location" doc:"Whether others see your place label (coordinates are never shown)"`
}

// Profile is the caller's own profile, every field included.
type Profile struct {
	Object         string            `json:"object" enum:"user"`
	ID             string            `json:"id" example:"usr_068ay3yzbf8z1rmbn3y0p6fs2g"`
	Email          string            `json:"email" format:"email"`
	Username       string            `json:"username"`
	FirstName      string            `json:"first_name"`
	LastName       string            `json:"last_name"`
	Sports         []string          `json:"sports" doc:"Canonical sport names (GET /v1/sports)"`
	SkillLevels    map[string]string `json:"skill_levels" doc:"sport -> beginner | intermediate | advanced | expert"`
	Location       string            `json:"location" doc:"Free-text place label"`
	Latitude       *float64          `json:"latitude" doc:"Only ever shown to you"`
	Longitude      *float64          `json:"longitude" doc:"Only ever shown to you"`
	LocationSource string            `json:"location_source" enum:"client,gazetteer,none" doc:"How latitude and longitude were obtained: sent by an app, resolved from location by the service's gazetteer, or none"`
	TravelRadiusKM float64           `json:"travel_radius_km"`
	Bio            string            `json:"bio"`
	Timezone       string            `json:"timezone" doc:"IANA time zone of the availability slots"`
	Availability   []Slot            `json:"availability"`
	Privacy        Privacy           `json:"privacy"`
	Verified       bool              `json:"verified" doc:"ID verification approved"`
	Tier           string            `json:"tier" enum:"free,pro,business,enterprise"`
	CreatedAt      string            `json:"created_at" format:"date-time"`
	UpdatedAt      string            `json:"updated_at" format:"date-time"`
}

// PublicProfile is what other users see, within the owner's privacy settings.
type PublicProfile struct {
	Object       string            `json:"object" enum:"user"`
	ID           string            `json:"id"`
	Username     string            `json:"username"`
	FirstName    string            `json:"first_name"`
	LastName     string            `json:"last_name"`
	Sports       []string          `json:"sports"`
	SkillLevels  map[string]string `json:"skill_levels"`
	Location     string            `json:"location,omitempty" doc:"Absent when the user hides it"`
	Bio          string            `json:"bio"`
	Timezone     string            `json:"timezone"`
	Availability []Slot            `json:"availability"`
	Verified     bool              `json:"verified"`
	CreatedAt    string            `json:"created_at" format:"date-time"`
}

func slotsOut(in []users.Slot) []Slot {
	out := make([]Slot, len(in))
	for i, s := range in {
		out[i] = Slot(s)
	}
	return out
}

func profileOf(u *users.User) Profile {
	return Profile{
		Object: "user", ID: u.ID, Email: u.Email, Username: u.Username, FirstName: u.FirstName, LastName: u.LastName,
		Sports: u.Sports, SkillLevels: u.SkillLevels, Location: u.Location, Latitude: u.Latitude, Longitude: u.Longitude,
		LocationSource: u.LocationSource, TravelRadiusKM: u.TravelRadiusKM, Bio: u.Bio, Timezone: u.Timezone, Availability: slotsOut(u.Availability),
		Privacy: Privacy(u.Privacy), Verified: u.Verified, Tier: u.Tier,
		CreatedAt: wire.Time(u.CreatedAt), UpdatedAt: wire.Time(u.UpdatedAt),
	}
}

func publicProfileOf(u *users.User) PublicProfile {
	p := PublicProfile{
		Object: "user", ID: u.ID, Username: u.Username, FirstName: u.FirstName, LastName: u.LastName,
		Sports: u.Sports, SkillLevels: u.SkillLevels, Bio: u.Bio, Timezone: u.Timezone,
		Availability: slotsOut(u.Availability), Verified: u.Verified, CreatedAt: wire.Time(u.CreatedAt),
	}
	if u.Privacy.ShowLocation {
		p.Location = u.Location
	}
	return p
}

// NullableNumber is a PATCH field that may be absent, null (clear) or a number.
type NullableNumber struct {
	Set   bool
	Null  bool
	Value float64
}

// UnmarshalJSON records that the field was sent, and whether as null.
func (n *NullableNumber) UnmarshalJSON(b []byte) error {
	n.Set = true
	if string(b) == "null" {
		n.Null = true
		return nil
	}
	return json.Unmarshal(b, &n.Value)
}

// Schema tells Huma (and the OpenAPI document) the field is a nullable number.
func (NullableNumber) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: "number", Nullable: true}
}

func (n NullableNumber) domain() users.Nullable[float64] {
	return users.Nullable[float64]{Set: n.Set, Null: n.Null, Value: n.Value}
}

// PrivacyPatch changes some privacy settings.
type PrivacyPatch struct {
	ProfileVisibility *string `json:"profile_visibility,omitempty" enum:"members,matches,private"`
	Discoverable      *bool   `json:"discoverable,omitempty"`
	ShowLocation      *bool   `json:"show_location,omitempty"`
}

// ProfilePatch is the body of PATCH /v1/users/me: absent fields stay as they are.
type ProfilePatch struct {
	Username       *string            `json:"username,omitempty" minLength:"3" maxLength:"30"`
	FirstName      *string            `json:"first_name,omitempty" maxLength:"100"`
	LastName       *string            `json:"last_name,omitempty" maxLength:"100"`
	Sports         *[]string          `json:"sports,omitempty" maxItems:"20" doc:"Replaces the list; names are normalised (\"Ping-Pong\" -> \"table tennis\"); skill levels of removed sports go too"`
	SkillLevels    *map[string]string `json:"skill_levels,omitempty" doc:"Replaces the map; each sport must be in sports"`
	Location       *string            `json:"location,omitempty" maxLength:"200" doc:"A place name; sent without coordinates, it is resolved offline to the place's position (GET /v1/places suggests names)"`
	Latitude       NullableNumber     `json:"latitude,omitempty" doc:"-90..90, set with longitude; null clears both"`
	Longitude      NullableNumber     `json:"longitude,omitempty" doc:"-180..180, set with latitude; null clears both"`
	TravelRadiusKM *float64           `json:"travel_radius_km,omitempty" exclusiveMinimum:"0" maximum:"1000"`
	Bio            *string            `json:"bio,omitempty" maxLength:"2000"`
	Timezone       *string            `json:"timezone,omitempty" example:"Europe/Paris"`
	Availability   *[]Slot            `json:"availability,omitempty" maxItems:"50" doc:"Replaces the list"`
	Privacy        *PrivacyPatch      `json:"privacy,omitempty"`
}

func (p *ProfilePatch) domain() users.Patch {
	out := users.Patch{
		Username: p.Username, FirstName: p.FirstName, LastName: p.LastName, Sports: p.Sports, SkillLevels: p.SkillLevels,
		Location: p.Location, Latitude: p.Latitude.domain(), Longitude: p.Longitude.domain(),
		TravelRadiusKM: p.TravelRadiusKM, Bio: p.Bio, Timezone: p.Timezone,
	}
	if p.Availability != nil {
		slots := make([]users.Slot, len(*p.Availability))
		for i, s := range *p.Availability {
			slots[i] = users.Slot(s)
		}
		out.Availability = &slots
	}
	if p.Privacy != nil {
		out.Privacy = &users.PrivacyPatch{ProfileVisibility: p.Privacy.ProfileVisibility, Discoverable: p.Privacy.Discoverable, ShowLocation: p.Privacy.ShowLocation}
	}
	// Clearing one coordinate clears the pair: they only make sense together.
	if out.Latitude.Set && out.Latitude.Null && !out.Longitude.Set {
		out.Longitude = users.Nullable[float64]{Set: true, Null: true}
	}
	if out.Longitude.Set && out.Longitude.Null && !out.Latitude.Set {
		out.Latitude = users.Nullable[float64]{Set: true, Null: true}
	}
	return out
}

type profileOut struct{ Body Profile }

type publicProfileOut struct{ Body PublicProfile }

func (s *server) registerUsers() {
	tags := []string{"Users and profiles"}
	huma.Register(s.api, huma.Operation{
		OperationID: "get-me", Method: http.MethodGet, Path: "/v1/users/me", Tags: tags,
		Summary:     "Your profile",
		Description: "The calling user's profile, every field included. Scope: read or profile.",
		Security:    requires(auth.ScopeRead, auth.ScopeProfile),
	}, func(ctx context.Context, _ *struct{}) (*profileOut, error) {
		p := principalOf(ctx)
		// Read along with the credential when it is an API key.
		if u, ok := p.Profile.(*users.User); ok && u.ID == p.UserID {
			return &profileOut{Body: profileOf(u)}, nil
		}
		u, err := s.users.Get(ctx, p.UserID)
		if err != nil {
			return nil, err
		}
		return &profileOut{Body: profileOf(u)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "update-me", Method: http.MethodPatch, Path: "/v1/users/me", Tags: tags,
		Summary:     "Update your profile",
		Description: "Changes the fields sent and leaves the others. Records user.updated when something changed. Scope: write or profile; the username, which is a login identity, only with an API key or a first-party client.",
		Security:    requires(auth.ScopeWrite, auth.ScopeProfile),
	}, func(ctx context.Context, in *struct{ Body ProfilePatch }) (*profileOut, error) {
		p := principalOf(ctx)
		if in.Body.Username != nil {
			if _, err := accountManager(ctx); err != nil {
				return nil, &apperr.Error{Kind: apperr.Forbidden, Code: "forbidden", Param: "username",
					Message: "the username, a login identity, is changed only with an API key or a first-party application, not by third-party applications"}
			}
		}
		u, err := screened(ctx, s, p.UserID, moderation.TargetUser, p.UserID, moderation.ContextProfile, profileTexts(&in.Body),
			func() (*users.User, string, error) {
				u, err := s.users.Update(ctx, p.UserID, in.Body.domain())
				return u, p.UserID, err
			})
		if err != nil {
			return nil, err
		}
		return &profileOut{Body: profileOf(u)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "delete-me", Method: http.MethodDelete, Path: "/v1/users/me", Tags: tags,
		Summary:       "Delete your account",
		Description:   "Erases the account's personal data for good, revokes every token, key and session it holds, and records user.deleted. Scope: profile; API keys and first-party clients only.",
		Security:      requires(auth.ScopeProfile),
		DefaultStatus: http.StatusNoContent,
	}, func(ctx context.Context, _ *struct{}) (*struct{}, error) {
		// Irreversible: never for a third-party application, whatever it was granted.
		p, err := accountManager(ctx)
		if err != nil {
			return nil, err
		}
		return nil, s.users.Delete(ctx, p.UserID)
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "get-user", Method: http.MethodGet, Path: "/v1/users/{id}", Tags: tags,
		Summary:     "A user's public profile",
		Description: "What other users may see of a profile: never the email or coordinates, the place label only if shown. A private profile is 404 to everyone else; a matches-only profile to everyone without an accepted match with its owner; any profile to someone blocked by, or blocking, its owner. Scope: read or profile.",
		Security:    requires(auth.ScopeRead, auth.ScopeProfile),
	}, func(ctx context.Context, in *struct {
		ID string `path:"id" maxLength:"64" doc:"usr_... or me"`
	}) (*publicProfileOut, error) {
		p := principalOf(ctx)
		id := in.ID
		if id == "me" {
			id = p.UserID
		}
		u, err := s.users.View(ctx, p.UserID, id)
		if err != nil {
			return nil, err
		}
		return &publicProfileOut{Body: publicProfileOf(u)}, nil
	})
}
