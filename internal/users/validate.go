package users

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // time zones must validate on machines without a zoneinfo database
	"unicode"
	"unicode/utf8"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/sports"
)

// Bounds of profile fields. They are part of the API contract and appear in
// the OpenAPI document through the HTTP layer's schema tags.
const (
	MinUsername     = 3
	MaxUsername     = 30
	MaxName         = 100
	MaxLocation     = 200
	MaxBio          = 2000
	MaxSports       = 20
	MaxSlots        = 50
	MaxTravelRadius = 1000
)

var usernameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// reservedUsernames cannot be registered: they would let an account pose as
// the service or its staff.
var reservedUsernames = []string{"admin", "administrator", "matchpoint", "operator", "root", "support", "system", "security", "help", "api", "oauth", "me"}

// Weekdays, in order, as availability slots name them.
var Weekdays = []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}

// CheckUsername validates a username and returns its uniqueness key.
func CheckUsername(u string) (string, error) {
	n := utf8.RuneCountInString(u)
	if n < MinUsername || n > MaxUsername || !usernameRE.MatchString(u) {
		return "", apperr.InvalidParam("username", "invalid_username",
			"username must be %d to %d letters, digits, '.', '_' or '-', starting with a letter or digit", MinUsername, MaxUsername)
	}
	key := strings.ToLower(u)
	if slices.Contains(reservedUsernames, key) {
		return "", apperr.InvalidParam("username", "username_reserved", "username %q is reserved", u)
	}
	return key, nil
}

func checkText(param, s string, max int) error {
	if utf8.RuneCountInString(s) > max {
		return apperr.InvalidParam(param, "too_long", "%s must be at most %d characters", param, max)
	}
	if !utf8.ValidString(s) {
		return apperr.InvalidParam(param, "invalid_text", "%s must be valid UTF-8", param)
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' {
			return apperr.InvalidParam(param, "invalid_text", "%s must not contain control characters", param)
		}
	}
	return nil
}

func checkLine(param, s string, max int) error {
	if strings.ContainsAny(s, "\r\n") {
		return apperr.InvalidParam(param, "invalid_text", "%s must be a single line", param)
	}
	return checkText(param, s, max)
}

// NormalizeSports maps names to canonical ones, dropping duplicates.
func NormalizeSports(in []string) ([]string, error) {
	if len(in) > MaxSports {
		return nil, apperr.InvalidParam("sports", "too_many", "at most %d sports", MaxSports)
	}
	out := make([]string, 0, len(in))
	for i, s := range in {
		n, ok := sports.Normalize(s)
		if !ok {
			return nil, apperr.InvalidParam(fmt.Sprintf("sports[%d]", i), "unknown_sport",
				"%q is not a known sport; GET /v1/sports lists them", s)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// NormalizeSkillLevels maps sport names to canonical ones and checks every
// level, and that each sport is one of the profile's sports.
func NormalizeSkillLevels(in map[string]string, profileSports []string) (map[string]string, error) {
	out := make(map[string]string, len(in))
	for sport, level := range in {
		n, ok := sports.Normalize(sport)
		if !ok {
			return nil, apperr.InvalidParam("skill_levels."+sport, "unknown_sport", "%q is not a known sport", sport)
		}
		if !slices.Contains(profileSports, n) {
			return nil, apperr.InvalidParam("skill_levels."+sport, "sport_not_in_profile", "%q is not one of the profile's sports", sport)
		}
		if !slices.Contains(SkillLevels, level) {
			return nil, apperr.InvalidParam("skill_levels."+sport, "invalid_skill_level",
				"skill level must be one of %s", strings.Join(SkillLevels, ", "))
		}
		out[n] = level
	}
	return out, nil
}

func checkCoordinates(lat, lon *float64) error {
	if (lat == nil) != (lon == nil) {
		p := "latitude"
		if lat != nil {
			p = "longitude"
		}
		return apperr.InvalidParam(p, "incomplete_coordinates", "latitude and longitude are set together")
	}
	if lat != nil && (math.IsNaN(*lat) || *lat < -90 || *lat > 90) {
		return apperr.InvalidParam("latitude", "out_of_range", "latitude must be between -90 and 90")
	}
	if lon != nil && (math.IsNaN(*lon) || *lon < -180 || *lon > 180) {
		return apperr.InvalidParam("longitude", "out_of_range", "longitude must be between -180 and 180")
	}
	return nil
}

func checkTimezone(tz string) error {
	if tz == "" || tz == "Local" {
		return apperr.InvalidParam("timezone", "invalid_timezone", "timezone must be an IANA name like Europe/Paris")
	}
	if _, err := time.LoadLocation(tz); err != nil {
		return apperr.InvalidParam("timezone", "invalid_timezone", "timezone must be an IANA name like Europe/Paris")
	}
	return nil
}

func parseClock(s string) (int, bool) {
	if len(s) != 5 || s[2] != ':' {
		return 0, false
	}
	var h, m int
	if _, err := fmt.Sscanf(s, "%02d:%02d", &h, &m); err != nil || h > 24 || m > 59 || (h == 24 && m != 0) {
		return 0, false
	}
	return h*60 + m, true
}

// CheckAvailability validates weekly slots.
func CheckAvailability(slots []Slot) error {
	if len(slots) > MaxSlots {
		return apperr.InvalidParam("availability", "too_many", "at most %d availability slots", MaxSlots)
	}
	for i, s := range slots {
		p := fmt.Sprintf("availability[%d]", i)
		if !slices.Contains(Weekdays, s.Day) {
			return apperr.InvalidParam(p+".day", "invalid_day", "day must be one of %s", strings.Join(Weekdays, ", "))
		}
		start, ok1 := parseClock(s.Start)
		if !ok1 {
			return apperr.InvalidParam(p+".start", "invalid_time", "start must be a time of day like 18:30")
		}
		end, ok2 := parseClock(s.End)
		if !ok2 {
			return apperr.InvalidParam(p+".end", "invalid_time", "end must be a time of day like 21:00")
		}
		if end <= start {
			return apperr.InvalidParam(p+".end", "invalid_time", "end must be after start")
		}
	}
	return nil
}

func checkPrivacy(p Privacy) error {
	if p.ProfileVisibility != VisibilityMembers && p.ProfileVisibility != VisibilityMatches && p.ProfileVisibility != VisibilityPrivate {
		return apperr.InvalidParam("privacy.profile_visibility", "invalid_visibility", "profile_visibility must be members, matches or private")
	}
	return nil
}
