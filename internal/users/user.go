// Package users holds accounts and their sports profiles: registration,
// sign-in, profile updates with privacy settings, deletion, tiers and ID
// verification.
package users

import (
	"time"

	"github.com/matchpoint-api/matchpoint/internal/auth"
)

// User is an account with its profile.
type User struct {
	ID       string
	Email    string
	Username string
	// EmailKey and UsernameKey are what uniqueness and sign-in look-ups use,
	// computed once by NormalizeEmail and CheckUsername.
	EmailKey       string
	UsernameKey    string
	FirstName      string
	LastName       string
	Sports         []string          // canonical names, in the user's order
	SkillLevels    map[string]string // sport -> skill level
	Location       string            // free-text place label
	Latitude       *float64
	Longitude      *float64
	LocationSource string // how Latitude and Longitude were obtained: LocationClient, LocationGazetteer or LocationNone
	TravelRadiusKM float64
	Bio            string
	Timezone       string // IANA name; availability slots are in it
	Availability   []Slot
	Privacy        Privacy
	Verified       bool
	Role           string // auth.RoleMember, RoleOperator or RoleSystem
	Tier           string
	// RateLimit is a custom hourly request limit; nil means the tier's default.
	RateLimit    *int64
	PasswordHash string // empty: the account cannot sign in with a password
	// Suspension is set while (or since) moderation suspended the account;
	// see auth.Suspension.ActiveAt.
	Suspension *auth.Suspension
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Slot is one weekly availability window, in the user's time zone.
type Slot struct {
	Day   string `json:"day"`   // monday .. sunday
	Start string `json:"start"` // HH:MM
	End   string `json:"end"`   // HH:MM, after Start
}

// Privacy is who sees what of a profile.
type Privacy struct {
	// ProfileVisibility is "members" (every signed-in user), "matches"
	// (only people with an accepted match) or "private" (nobody but the user).
	ProfileVisibility string `json:"profile_visibility"`
	// Discoverable says whether the user appears in match results.
	Discoverable bool `json:"discoverable"`
	// ShowLocation says whether others see the place label. Coordinates are
	// never shown to anyone but the user.
	ShowLocation bool `json:"show_location"`
}

// Profile visibilities.
const (
	VisibilityMembers = "members"
	VisibilityMatches = "matches"
	VisibilityPrivate = "private"
)

// How a profile's coordinates were obtained.
const (
	LocationClient    = "client"    // sent by the app
	LocationGazetteer = "gazetteer" // resolved from the place label
	LocationNone      = "none"      // no coordinates
)

// Skill levels, in order (DECISIONS.md, Profile defaults).
var SkillLevels = []string{"beginner", "intermediate", "advanced", "expert"}

// DefaultTravelRadiusKM is a new profile's travel radius.
const DefaultTravelRadiusKM = 25

// DefaultPrivacy is a new profile's privacy: visible to signed-in users, in
// match results, place label shown.
var DefaultPrivacy = Privacy{ProfileVisibility: VisibilityMembers, Discoverable: true, ShowLocation: true}

// Verification is an ID verification request and its review.
type Verification struct {
	ID           string
	UserID       string
	Status       string // pending, approved, rejected
	DocumentType string
	Note         string
	ReviewerID   string
	ReviewNote   string
	CreatedAt    time.Time
	ReviewedAt   *time.Time
}

// Verification statuses and document types.
const (
	VerificationPending  = "pending"
	VerificationApproved = "approved"
	VerificationRejected = "rejected"
)

// DocumentTypes a verification request may name.
var DocumentTypes = []string{"passport", "national_id", "driving_licence", "residence_permit"}
