package events

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/sports"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

func required(param, s string) error {
	if strings.TrimSpace(s) == "" {
		return apperr.InvalidParam(param, "validation_failed", "%s is required", param)
	}
	return nil
}

// normalizeSport returns the canonical name of a sport.
func normalizeSport(param, s string) (string, error) {
	n, ok := sports.Normalize(s)
	if !ok {
		return "", apperr.InvalidParam(param, "unknown_sport", "%q is not a known sport; GET /v1/sports lists them", s)
	}
	return n, nil
}

// skillRank is the position of a level in users.SkillLevels, or -1.
func skillRank(level string) int { return slices.Index(users.SkillLevels, level) }

func checkSkill(param, level string) error {
	if level != "" && skillRank(level) < 0 {
		return apperr.InvalidParam(param, "invalid_skill_level", "%s must be beginner, intermediate, advanced or expert", param)
	}
	return nil
}

func checkSkillRange(min, max string) error {
	if err := checkSkill("skill_min", min); err != nil {
		return err
	}
	if err := checkSkill("skill_max", max); err != nil {
		return err
	}
	if min != "" && max != "" && skillRank(min) > skillRank(max) {
		return apperr.InvalidParam("skill_max", "invalid_skill_range", "skill_max must not be below skill_min")
	}
	return nil
}

func loadZone(tz string) (*time.Location, error) {
	if tz == "" || tz == "Local" || strings.ContainsAny(tz, " \\") {
		return nil, apperr.InvalidParam("timezone", "invalid_timezone", "timezone must be an IANA name like Europe/Paris")
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, apperr.InvalidParam("timezone", "invalid_timezone", "timezone must be an IANA name like Europe/Paris")
	}
	return loc, nil
}

// checkCoordinates validates an optional pair.
func checkCoordinates(lat, lon *float64) error {
	if (lat == nil) != (lon == nil) {
		param := "latitude"
		if lat != nil {
			param = "longitude"
		}
		return apperr.InvalidParam(param, "incomplete_coordinates", "latitude and longitude go together")
	}
	if lat == nil {
		return nil
	}
	if math.IsNaN(*lat) || *lat < -90 || *lat > 90 {
		return apperr.InvalidParam("latitude", "out_of_range", "latitude must be between -90 and 90")
	}
	if math.IsNaN(*lon) || *lon < -180 || *lon > 180 {
		return apperr.InvalidParam("longitude", "out_of_range", "longitude must be between -180 and 180")
	}
	return nil
}

func checkCapacity(n int) error {
	if n < 1 || n > MaxCapacity {
		return apperr.InvalidParam("max_participants", "out_of_range", "max_participants must be between 1 and %d", MaxCapacity)
	}
	return nil
}

func checkVisibility(v string) error {
	if v != Public && v != InviteOnly {
		return apperr.InvalidParam("visibility", "invalid_visibility", "visibility must be public or invite_only")
	}
	return nil
}

// checkTimes validates a start and end at now.
func checkTimes(start, end, now time.Time) error {
	if !start.After(now) {
		return apperr.InvalidParam("date", "date_in_past", "date must be in the future")
	}
	if start.After(now.Add(MaxAhead)) {
		return apperr.InvalidParam("date", "date_too_far", "date must be within two years")
	}
	if !end.After(start) {
		return apperr.InvalidParam("end_date", "end_before_start", "end_date must be after date")
	}
	if end.Sub(start) > MaxDuration {
		return apperr.InvalidParam("end_date", "invalid_duration", "an event lasts at most 7 days")
	}
	return nil
}
