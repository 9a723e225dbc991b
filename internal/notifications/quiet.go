package notifications

import (
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
)

// QuietHours is a daily window, in the user's own time zone, during which
// no push is sent. Pushes that fall in it wait until it ends (they are not
// dropped), and one whose notification was read in the meantime is never
// sent. The window may span midnight (22:00 to 07:00). Email is not held:
// it does not ring.
type QuietHours struct {
	Start string `json:"start"` // HH:MM, local
	End   string `json:"end"`   // HH:MM, local; a window with End before Start spans midnight
}

// clockTime parses HH:MM into minutes after midnight.
func clockTime(s string) (int, bool) {
	if len(s) != 5 || s[2] != ':' {
		return 0, false
	}
	for _, i := range []int{0, 1, 3, 4} {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	h, m := int(s[0]-'0')*10+int(s[1]-'0'), int(s[3]-'0')*10+int(s[4]-'0')
	if h > 23 || m > 59 {
		return 0, false
	}
	return h*60 + m, true
}

// Check validates the window.
func (q *QuietHours) Check() error {
	start, ok := clockTime(q.Start)
	if !ok {
		return apperr.InvalidParam("quiet_hours.start", "invalid_quiet_hours", "quiet hours are HH:MM, from 00:00 to 23:59")
	}
	end, ok := clockTime(q.End)
	if !ok {
		return apperr.InvalidParam("quiet_hours.end", "invalid_quiet_hours", "quiet hours are HH:MM, from 00:00 to 23:59")
	}
	if start == end {
		return apperr.InvalidParam("quiet_hours.end", "invalid_quiet_hours", "quiet hours must end at another time than they start")
	}
	return nil
}

// Location loads an IANA time zone, UTC when it is empty or unknown (the
// profile only ever stores valid names, but a zone can leave the database
// the binary carries).
func Location(name string) *time.Location {
	if name == "" {
		return time.UTC
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return time.UTC
	}
	return loc
}

// Until reports whether now falls in the quiet hours in loc and, if so,
// when they end. A nil window is never quiet.
func (q *QuietHours) Until(now time.Time, loc *time.Location) (time.Time, bool) {
	if q == nil {
		return time.Time{}, false
	}
	start, ok1 := clockTime(q.Start)
	end, ok2 := clockTime(q.End)
	if !ok1 || !ok2 || start == end {
		return time.Time{}, false
	}
	local := now.In(loc)
	m := local.Hour()*60 + local.Minute()
	var in bool
	if start < end {
		in = m >= start && m < end
	} else {
		in = m >= start || m < end
	}
	if !in {
		return time.Time{}, false
	}
	// The next End after now, in local time. time.Date moves a wall time
	// that a DST change skips to the same offset past it, so the window
	// still ends.
	y, mo, d := local.Date()
	until := time.Date(y, mo, d, end/60, end%60, 0, 0, loc)
	if !until.After(now) {
		until = time.Date(y, mo, d+1, end/60, end%60, 0, 0, loc)
	}
	return until.UTC(), true
}
