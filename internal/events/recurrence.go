package events

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
)

// Recurrence accepts the part of RFC 5545's RRULE that organisers need for
// regular sessions: FREQ=DAILY or WEEKLY, INTERVAL, BYDAY (plain weekdays),
// and COUNT or UNTIL. Occurrences keep the local wall-clock time of the
// first one in the event's time zone, so a 19:00 session stays at 19:00
// across daylight-saving changes (its UTC instant moves).

// Bounds of a recurrence.
const (
	MaxOccurrences = 100 // occurrences one rule may produce (each becomes an event)
	MaxInterval    = 52
)

// Rule is a parsed recurrence rule.
type Rule struct {
	Freq     string         // DAILY or WEEKLY
	Interval int            // 1 or more
	ByDay    []time.Weekday // empty: the weekday of the first occurrence (WEEKLY), every day (DAILY)
	Count    int            // 0 when Until bounds the rule
	// Until bounds the rule, inclusively. UntilDate is set when it was a
	// date (YYYYMMDD): the last local day an occurrence may fall on.
	Until     *time.Time
	UntilDate string
	// untilLocal is a floating date-time (no Z), read in the event's zone.
	untilLocal *civil
}

type civil struct {
	y        int
	m        time.Month
	d        int
	h, mi, s int
}

var weekdays = map[string]time.Weekday{"MO": time.Monday, "TU": time.Tuesday, "WE": time.Wednesday,
	"TH": time.Thursday, "FR": time.Friday, "SA": time.Saturday, "SU": time.Sunday}

func badRule(format string, args ...any) error {
	return apperr.InvalidParam("recurrence", "invalid_recurrence", format, args...)
}

// ParseRule reads an RRULE value, with or without the "RRULE:" prefix.
func ParseRule(s string) (*Rule, error) {
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		return nil, badRule("recurrence must be at most 200 characters")
	}
	if len(s) >= 6 && strings.EqualFold(s[:6], "RRULE:") {
		s = s[6:]
	}
	r := &Rule{Interval: 1}
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ";") {
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		k = strings.ToUpper(strings.TrimSpace(k))
		v = strings.ToUpper(strings.TrimSpace(v))
		if !ok || v == "" {
			return nil, badRule("%q is not NAME=VALUE", part)
		}
		if seen[k] {
			return nil, badRule("%s appears twice", k)
		}
		seen[k] = true
		switch k {
		case "FREQ":
			if v != "DAILY" && v != "WEEKLY" {
				return nil, badRule("FREQ must be DAILY or WEEKLY")
			}
			r.Freq = v
		case "INTERVAL":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > MaxInterval {
				return nil, badRule("INTERVAL must be a whole number from 1 to %d", MaxInterval)
			}
			r.Interval = n
		case "COUNT":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > MaxOccurrences {
				return nil, badRule("COUNT must be a whole number from 1 to %d", MaxOccurrences)
			}
			r.Count = n
		case "UNTIL":
			if err := r.parseUntil(v); err != nil {
				return nil, err
			}
		case "BYDAY":
			for _, d := range strings.Split(v, ",") {
				wd, ok := weekdays[d]
				if !ok {
					return nil, badRule("BYDAY takes weekdays MO, TU, WE, TH, FR, SA, SU (no ordinal prefix), not %q", d)
				}
				if !slices.Contains(r.ByDay, wd) {
					r.ByDay = append(r.ByDay, wd)
				}
			}
		case "WKST":
			if v != "MO" {
				return nil, badRule("only WKST=MO is supported")
			}
		default:
			return nil, badRule("RRULE part %s is not supported; use FREQ, INTERVAL, BYDAY, COUNT or UNTIL", k)
		}
	}
	if r.Freq == "" {
		return nil, badRule("FREQ is required (DAILY or WEEKLY)")
	}
	if (r.Count == 0) == (r.Until == nil && r.untilLocal == nil && r.UntilDate == "") {
		return nil, badRule("give exactly one of COUNT and UNTIL: every occurrence becomes an event, so the rule must end")
	}
	// Monday-first order, so expansion walks a week in order.
	slices.SortFunc(r.ByDay, func(a, b time.Weekday) int { return mondayIndex(a) - mondayIndex(b) })
	return r, nil
}

func (r *Rule) parseUntil(v string) error {
	bad := badRule("UNTIL must be YYYYMMDD, YYYYMMDDTHHMMSSZ or YYYYMMDDTHHMMSS")
	switch len(v) {
	case 8:
		t, err := time.Parse("20060102", v)
		if err != nil {
			return bad
		}
		r.UntilDate = t.Format("2006-01-02")
	case 16:
		if v[15] != 'Z' {
			return bad
		}
		t, err := time.Parse("20060102T150405Z", v)
		if err != nil {
			return bad
		}
		r.Until = &t
	case 15:
		t, err := time.Parse("20060102T150405", v)
		if err != nil {
			return bad
		}
		r.untilLocal = &civil{t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second()}
	default:
		return bad
	}
	return nil
}

// String is the rule in canonical RRULE form (without the prefix).
func (r *Rule) String() string {
	parts := []string{"FREQ=" + r.Freq}
	if r.Interval > 1 {
		parts = append(parts, "INTERVAL="+strconv.Itoa(r.Interval))
	}
	if len(r.ByDay) > 0 {
		var ds []string
		for _, d := range r.ByDay {
			ds = append(ds, strings.ToUpper(d.String()[:2]))
		}
		parts = append(parts, "BYDAY="+strings.Join(ds, ","))
	}
	switch {
	case r.Count > 0:
		parts = append(parts, "COUNT="+strconv.Itoa(r.Count))
	case r.UntilDate != "":
		parts = append(parts, "UNTIL="+strings.ReplaceAll(r.UntilDate, "-", ""))
	case r.Until != nil:
		parts = append(parts, "UNTIL="+r.Until.UTC().Format("20060102T150405Z"))
	case r.untilLocal != nil:
		u := r.untilLocal
		parts = append(parts, "UNTIL="+time.Date(u.y, u.m, u.d, u.h, u.mi, u.s, 0, time.UTC).Format("20060102T150405"))
	}
	return strings.Join(parts, ";")
}

func mondayIndex(d time.Weekday) int { return (int(d) + 6) % 7 }

// Expand returns the start of every occurrence, the first being start
// itself (RFC 5545: DTSTART always counts as the first occurrence). Each
// later one falls on its local date at start's local time of day in loc.
// A rule that would produce more than MaxOccurrences is refused.
func (r *Rule) Expand(start time.Time, loc *time.Location) ([]time.Time, error) {
	local := start.In(loc)
	day0 := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, time.UTC) // a civil date, carried in UTC
	hh, mm, ss := local.Clock()
	var until *time.Time
	switch {
	case r.Until != nil:
		until = r.Until
	case r.untilLocal != nil:
		u := r.untilLocal
		t := LocalInstant(u.y, u.m, u.d, u.h, u.mi, u.s, loc)
		until = &t
	}
	lastDay := ""
	if r.UntilDate != "" {
		lastDay = r.UntilDate
	}
	out := []time.Time{start}
	limit := r.Count
	if limit == 0 {
		limit = MaxOccurrences + 1 // one more than allowed, to detect a rule that runs over
	}
	accept := func(day time.Time) (done bool) {
		if !day.After(day0) {
			return false // the first occurrence is start itself
		}
		if lastDay != "" && day.Format("2006-01-02") > lastDay {
			return true
		}
		t := LocalInstant(day.Year(), day.Month(), day.Day(), hh, mm, ss, loc)
		if until != nil && t.After(*until) {
			return true
		}
		out = append(out, t)
		return len(out) >= limit
	}
	// Walk civil dates; a bounded number of steps keeps a sparse rule (BYDAY
	// that never matches with DAILY) from looping for ever.
	const maxSteps = 5000
	switch r.Freq {
	case "DAILY":
		for k := 1; k <= maxSteps && len(out) < limit; k++ {
			day := day0.AddDate(0, 0, k*r.Interval)
			if len(r.ByDay) > 0 && !slices.Contains(r.ByDay, day.Weekday()) {
				continue
			}
			if accept(day) {
				break
			}
		}
	case "WEEKLY":
		days := r.ByDay
		if len(days) == 0 {
			days = []time.Weekday{day0.Weekday()}
		}
		week0 := day0.AddDate(0, 0, -mondayIndex(day0.Weekday()))
	weeks:
		for k := 0; k <= maxSteps && len(out) < limit; k++ {
			week := week0.AddDate(0, 0, 7*k*r.Interval)
			for _, d := range days {
				if accept(week.AddDate(0, 0, mondayIndex(d))) {
					break weeks
				}
			}
		}
	}
	if len(out) > MaxOccurrences {
		return nil, badRule("the rule produces more than %d occurrences; end it sooner with COUNT or UNTIL", MaxOccurrences)
	}
	return out, nil
}

// LocalInstant is the instant at which the wall clock of loc reads the
// given date and time. RFC 5545's rules settle the two awkward cases: a
// time that occurs twice (clocks going back) is its first occurrence, and
// a time that does not exist (clocks going forward) is read with the UTC
// offset in force before the gap, which moves it later by the gap's length
// (02:30 on a spring-forward night in Paris becomes 03:30).
func LocalInstant(y int, m time.Month, d, hh, mm, ss int, loc *time.Location) time.Time {
	wall := time.Date(y, m, d, hh, mm, ss, 0, time.UTC)
	_, before := wall.Add(-36 * time.Hour).In(loc).Zone()
	_, after := wall.Add(36 * time.Hour).In(loc).Zone()
	var best *time.Time
	for _, off := range []int{before, after} {
		c := wall.Add(-time.Duration(off) * time.Second)
		l := c.In(loc)
		if l.Year() == y && l.Month() == m && l.Day() == d && l.Hour() == hh && l.Minute() == mm && l.Second() == ss {
			if best == nil || c.Before(*best) {
				best = &c
			}
		}
	}
	if best != nil {
		return best.UTC()
	}
	return wall.Add(-time.Duration(before) * time.Second).UTC()
}
