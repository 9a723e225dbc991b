package users

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/secrets"
)

// Service is the users domain.
type Service struct {
	store     Store
	throttle  LoginThrottle
	clock     clock.Clock
	geocoder  Geocoder
	relations Relations
}

// Geocoder resolves a place label to coordinates (the offline gazetteer).
type Geocoder interface {
	Geocode(label string) (lat, lon float64, ok bool)
}

// Relations answers what profile visibility depends on between two people:
// a block either way hides each from the other; the "matches" visibility
// shows a profile only to people with an accepted match.
type Relations interface {
	Blocked(ctx context.Context, a, b string) (bool, error)
	Matched(ctx context.Context, a, b string) (bool, error)
}

// SetGeocoder makes profile updates that send a location without
// coordinates resolve it.
func (s *Service) SetGeocoder(g Geocoder) { s.geocoder = g }

// SetRelations makes View apply blocks and the "matches" visibility.
func (s *Service) SetRelations(r Relations) { s.relations = r }

// NewService returns the users domain over a store that also keeps sign-in
// throttling state.
func NewService(s interface {
	Store
	LoginThrottle
}, c clock.Clock) *Service {
	return &Service{store: s, throttle: s, clock: c}
}

// Registration is what sign-up asks for.
type Registration struct {
	Email     string
	Username  string
	Password  string
	FirstName string
	LastName  string
	Role      string // empty: member
}

// Register creates an account with a default profile. Sign-ups that carry a
// client IP (the web form) are throttled per IP.
func (s *Service) Register(ctx context.Context, r Registration) (*User, error) {
	if err := s.throttleSignup(ctx); err != nil {
		return nil, err
	}
	email, emailKey, err := NormalizeEmail(r.Email)
	if err != nil {
		return nil, err
	}
	usernameKey, err := CheckUsername(r.Username)
	if err != nil {
		return nil, err
	}
	if err := CheckPassword(r.Password, r.Username, email); err != nil {
		return nil, err
	}
	r.FirstName, r.LastName = strings.TrimSpace(r.FirstName), strings.TrimSpace(r.LastName)
	if err := checkLine("first_name", r.FirstName, MaxName); err != nil {
		return nil, err
	}
	if err := checkLine("last_name", r.LastName, MaxName); err != nil {
		return nil, err
	}
	role, err := checkRole(r.Role)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	u := &User{
		ID: ids.New(ids.User), Email: email, EmailKey: emailKey, Username: r.Username, UsernameKey: usernameKey,
		FirstName: r.FirstName, LastName: r.LastName,
		Sports: []string{}, SkillLevels: map[string]string{}, Availability: []Slot{},
		TravelRadiusKM: DefaultTravelRadiusKM, Timezone: "UTC", Privacy: DefaultPrivacy, LocationSource: LocationNone,
		Role: role, Tier: TierFree, PasswordHash: secrets.HashPassword(r.Password),
		CreatedAt: now, UpdatedAt: now,
	}
	ev, err := userEvent(now, outbox.UserCreated, u)
	if err != nil {
		return nil, err
	}
	if err := s.store.CreateUser(ctx, u, ev); err != nil {
		return nil, err
	}
	return u, nil
}

// checkRole accepts the roles an account may be given (empty: member). The
// system role belongs to the service's own account alone, which only
// EnsureSystemAccount creates: it counts as an operator and its clients as
// first-party, so no input may ask for it.
func checkRole(role string) (string, error) {
	switch role {
	case "":
		return auth.RoleMember, nil
	case auth.RoleMember, auth.RoleOperator:
		return role, nil
	}
	return "", apperr.InvalidParam("role", "invalid_role", "role must be member or operator")
}

// SystemUsername is the first-party account that owns the service's own OAuth
// clients. It has no password and cannot sign in.
const SystemUsername = "matchpoint"

const systemEmail = "system@matchpoint.invalid"

// EnsureSystemAccount returns the first-party account, creating it if needed.
func (s *Service) EnsureSystemAccount(ctx context.Context) (*User, error) {
	if u, err := s.store.UserByUsernameKey(ctx, SystemUsername); err == nil {
		return u, nil
	} else if !apperr.IsKind(err, apperr.NotFound) {
		return nil, err
	}
	now := s.clock.Now()
	u := &User{
		ID: ids.New(ids.User), Email: systemEmail, EmailKey: systemEmail, Username: SystemUsername, UsernameKey: SystemUsername,
		FirstName: "Matchpoint", Sports: []string{}, SkillLevels: map[string]string{}, Availability: []Slot{},
		TravelRadiusKM: DefaultTravelRadiusKM, Timezone: "UTC", LocationSource: LocationNone,
		Privacy: Privacy{ProfileVisibility: VisibilityPrivate},
		Role:    auth.RoleSystem, Tier: TierEnterprise, CreatedAt: now, UpdatedAt: now,
	}
	ev, err := userEvent(now, outbox.UserCreated, u)
	if err != nil {
		return nil, err
	}
	if err := s.store.CreateUser(ctx, u, ev); err != nil {
		if apperr.IsKind(err, apperr.Conflict) { // created concurrently by another node
			return s.store.UserByUsernameKey(ctx, SystemUsername)
		}
		return nil, err
	}
	return u, nil
}

// Get returns a live account.
func (s *Service) Get(ctx context.Context, id string) (*User, error) {
	if !ids.Valid(ids.User, id) {
		return nil, noUser(id)
	}
	u, err := s.store.UserByID(ctx, id)
	if apperr.IsKind(err, apperr.NotFound) {
		return nil, noUser(id)
	}
	return u, err
}

// noUser is the one answer for an account that does not exist, was deleted,
// or may not be seen: they must not be told apart (DECISIONS.md, Profile
// visibility).
func noUser(id string) error { return apperr.NotFoundf("no user %q", id) }

// View returns the account id as viewerID may see it, or NotFound when its
// privacy hides it. The caller renders only public fields for others.
func (s *Service) View(ctx context.Context, viewerID, id string) (*User, error) {
	u, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	// A suspended account is out of sight until the suspension ends.
	if u.ID != viewerID && (u.Privacy.ProfileVisibility == VisibilityPrivate || u.Role == auth.RoleSystem || u.Suspension.ActiveAt(s.clock.Now())) {
		return nil, noUser(id)
	}
	if u.ID != viewerID && s.relations != nil {
		if blocked, err := s.relations.Blocked(ctx, viewerID, u.ID); err != nil {
			return nil, err
		} else if blocked {
			return nil, apperr.NotFoundf("no user %q", id)
		}
		if u.Privacy.ProfileVisibility == VisibilityMatches {
			if matched, err := s.relations.Matched(ctx, viewerID, u.ID); err != nil {
				return nil, err
			} else if !matched {
				return nil, apperr.NotFoundf("no user %q", id)
			}
		}
	}
	return u, nil
}

// Nullable is a PATCH field that can be absent, null (clear it) or a value.
type Nullable[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// PrivacyPatch changes some privacy settings.
type PrivacyPatch struct {
	ProfileVisibility *string
	Discoverable      *bool
	ShowLocation      *bool
}

// Patch is a profile update: nil fields stay as they are.
type Patch struct {
	Username       *string
	FirstName      *string
	LastName       *string
	Sports         *[]string
	SkillLevels    *map[string]string
	Location       *string
	Latitude       Nullable[float64]
	Longitude      Nullable[float64]
	TravelRadiusKM *float64
	Bio            *string
	Timezone       *string
	Availability   *[]Slot
	Privacy        *PrivacyPatch
}

// Update applies a patch and records user.updated if anything changed.
func (s *Service) Update(ctx context.Context, id string, p Patch) (*User, error) {
	return s.store.ModifyUser(ctx, id, func(u *User) (*outbox.Event, error) {
		before := *u
		before.Sports = slices.Clone(u.Sports)
		before.SkillLevels = maps.Clone(u.SkillLevels)
		before.Availability = slices.Clone(u.Availability)
		if err := applyPatch(u, p); err != nil {
			return nil, err
		}
		s.locate(u, &before, p)
		if equalProfiles(&before, u) {
			return nil, nil
		}
		u.UpdatedAt = s.clock.Now()
		return userEvent(u.UpdatedAt, outbox.UserUpdated, u)
	})
}

func applyPatch(u *User, p Patch) error {
	if p.Username != nil {
		key, err := CheckUsername(*p.Username)
		if err != nil {
			return err
		}
		u.Username, u.UsernameKey = *p.Username, key
	}
	for _, f := range []struct {
		param string
		in    *string
		out   *string
		max   int
	}{
		{"first_name", p.FirstName, &u.FirstName, MaxName},
		{"last_name", p.LastName, &u.LastName, MaxName},
		{"location", p.Location, &u.Location, MaxLocation},
	} {
		if f.in != nil {
			v := strings.TrimSpace(*f.in)
			if err := checkLine(f.param, v, f.max); err != nil {
				return err
			}
			*f.out = v
		}
	}
	if p.Bio != nil {
		if err := checkText("bio", *p.Bio, MaxBio); err != nil {
			return err
		}
		u.Bio = strings.TrimSpace(*p.Bio)
	}
	if p.Sports != nil {
		list, err := NormalizeSports(*p.Sports)
		if err != nil {
			return err
		}
		u.Sports = list
		// Levels of sports no longer played go with them.
		maps.DeleteFunc(u.SkillLevels, func(k, _ string) bool { return !slices.Contains(list, k) })
	}
	if p.SkillLevels != nil {
		levels, err := NormalizeSkillLevels(*p.SkillLevels, u.Sports)
		if err != nil {
			return err
		}
		u.SkillLevels = levels
	}
	if p.Latitude.Set {
		u.Latitude = nullableValue(p.Latitude)
	}
	if p.Longitude.Set {
		u.Longitude = nullableValue(p.Longitude)
	}
	if err := checkCoordinates(u.Latitude, u.Longitude); err != nil {
		return err
	}
	if p.TravelRadiusKM != nil {
		if r := *p.TravelRadiusKM; !(r > 0 && r <= MaxTravelRadius) {
			return apperr.InvalidParam("travel_radius_km", "out_of_range", "travel_radius_km must be more than 0 and at most %d", MaxTravelRadius)
		}
		u.TravelRadiusKM = *p.TravelRadiusKM
	}
	if p.Timezone != nil {
		if err := checkTimezone(*p.Timezone); err != nil {
			return err
		}
		u.Timezone = *p.Timezone
	}
	if p.Availability != nil {
		if err := CheckAvailability(*p.Availability); err != nil {
			return err
		}
		u.Availability = slices.Clone(*p.Availability)
	}
	if p.Privacy != nil {
		if p.Privacy.ProfileVisibility != nil {
			u.Privacy.ProfileVisibility = *p.Privacy.ProfileVisibility
		}
		if p.Privacy.Discoverable != nil {
			u.Privacy.Discoverable = *p.Privacy.Discoverable
		}
		if p.Privacy.ShowLocation != nil {
			u.Privacy.ShowLocation = *p.Privacy.ShowLocation
		}
		if err := checkPrivacy(u.Privacy); err != nil {
			return err
		}
	}
	return nil
}

// locate records where the coordinates come from and, when the client sends
// a new place label without coordinates, resolves it with the geocoder.
// Coordinates the client sent stay until it sends others or clears them: a
// label edited by hand need not move a position set by the device. Clearing
// them with a label in the same patch resolves that label.
func (s *Service) locate(u, before *User, p Patch) {
	switch {
	case p.Latitude.Set || p.Longitude.Set:
		if u.Latitude != nil {
			u.LocationSource = LocationClient
			return
		}
		if p.Location == nil { // cleared, and no label to fall back to in this patch
			u.LocationSource = LocationNone
			return
		}
	case p.Location != nil && u.Location != before.Location && before.LocationSource != LocationClient:
	default:
		return
	}
	u.Latitude, u.Longitude, u.LocationSource = nil, nil, LocationNone
	if u.Location != "" && s.geocoder != nil {
		if lat, lon, ok := s.geocoder.Geocode(u.Location); ok {
			u.Latitude, u.Longitude, u.LocationSource = &lat, &lon, LocationGazetteer
		}
	}
}

func nullableValue(n Nullable[float64]) *float64 {
	if n.Null {
		return nil
	}
	v := n.Value
	return &v
}

func equalProfiles(a, b *User) bool {
	eqf := func(x, y *float64) bool { return (x == nil && y == nil) || (x != nil && y != nil && *x == *y) }
	return a.Username == b.Username && a.FirstName == b.FirstName && a.LastName == b.LastName &&
		slices.Equal(a.Sports, b.Sports) && maps.Equal(a.SkillLevels, b.SkillLevels) &&
		a.Location == b.Location && eqf(a.Latitude, b.Latitude) && eqf(a.Longitude, b.Longitude) &&
		a.TravelRadiusKM == b.TravelRadiusKM && a.Bio == b.Bio && a.Timezone == b.Timezone &&
		slices.Equal(a.Availability, b.Availability) && a.Privacy == b.Privacy
}

// Delete erases an account's personal data and revokes its credentials.
func (s *Service) Delete(ctx context.Context, id string) error {
	u, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	if u.Role == auth.RoleSystem {
		return apperr.Forbiddenf("forbidden", "the first-party account cannot be deleted")
	}
	now := s.clock.Now()
	ev, err := deletedEvent(now, id, u.CreatedAt)
	if err != nil {
		return err
	}
	return s.store.DeleteUser(ctx, id, now, ev)
}

// SetTier changes an account's tier and optional custom hourly limit.
func (s *Service) SetTier(ctx context.Context, id, tier string, limit *int64) (*User, error) {
	if err := CheckTier(tier, limit); err != nil {
		return nil, err
	}
	return s.store.ModifyUser(ctx, id, func(u *User) (*outbox.Event, error) {
		u.Tier, u.RateLimit = tier, limit
		u.UpdatedAt = s.clock.Now()
		return nil, nil
	})
}

// SetRole changes an account's role (member or operator).
func (s *Service) SetRole(ctx context.Context, id, role string) (*User, error) {
	if role != auth.RoleMember && role != auth.RoleOperator {
		return nil, apperr.InvalidParam("role", "invalid_role", "role must be member or operator")
	}
	return s.store.ModifyUser(ctx, id, func(u *User) (*outbox.Event, error) {
		if u.Role == auth.RoleSystem {
			return nil, apperr.Forbiddenf("forbidden", "the first-party account's role is fixed")
		}
		u.Role = role
		u.UpdatedAt = s.clock.Now()
		return nil, nil
	})
}
