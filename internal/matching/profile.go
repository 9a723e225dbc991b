package matching

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/users"
)

// Profile is what the score reads of a person: the same for the caller
// (built from the profile) and for a candidate (read from the index).
type Profile struct {
	UserID   string
	Levels   map[string]int // sport -> skill rank 1..4, 0 when not stated
	Lat, Lon float64
	RadiusKM float64
	// Week is the person's weekly availability as hours of the week in UTC
	// (bit h = hour h from Monday 00:00 UTC), each slot read in the person's
	// own time zone.
	Week     Week
	ActiveAt time.Time
}

// Week is a 168-bit set of hours.
type Week [3]uint64

// Hours counts the hours in the set.
func (w Week) Hours() int {
	return bits.OnesCount64(w[0]) + bits.OnesCount64(w[1]) + bits.OnesCount64(w[2])
}

// And is the hours in both sets.
func (w Week) And(o Week) Week { return Week{w[0] & o[0], w[1] & o[1], w[2] & o[2]} }

func (w *Week) set(h int) { h = ((h % 168) + 168) % 168; w[h/64] |= 1 << (h % 64) }

// Bytes encodes the set for the index (21 bytes).
func (w Week) Bytes() []byte {
	b := make([]byte, 21)
	for i := range 168 {
		if w[i/64]&(1<<(i%64)) != 0 {
			b[i/8] |= 1 << (i % 8)
		}
	}
	return b
}

// WeekFromBytes decodes Bytes: bit h of the set is bit h%8 of byte h/8,
// so the bytes are the three words in little-endian order.
func WeekFromBytes(b []byte) Week {
	var buf [24]byte
	copy(buf[:], b)
	return Week{binary.LittleEndian.Uint64(buf[0:]), binary.LittleEndian.Uint64(buf[8:]), binary.LittleEndian.Uint64(buf[16:]) & (1<<40 - 1)}
}

// WeekOf turns availability slots, in time zone tz, into UTC hours of the
// week, using the zone's offset at now (a slot counts the hours it touches).
func WeekOf(slots []users.Slot, tz string, now time.Time) Week {
	loc := location(tz)
	_, off := now.In(loc).Zone()
	var w Week
	for _, s := range slots {
		day := slices.Index(users.Weekdays, s.Day)
		start, ok1 := minutes(s.Start)
		end, ok2 := minutes(s.End)
		if day < 0 || !ok1 || !ok2 || end <= start {
			continue
		}
		// Minutes from Monday 00:00 local, shifted to UTC.
		from := day*24*60 + start - off/60
		to := day*24*60 + end - off/60
		for h := floorDiv(from, 60); h*60 < to; h++ {
			w.set(h)
		}
	}
	return w
}

// locations holds the zones loaded so far: time.LoadLocation reads and
// parses the zone's file on every call, and every search reads the caller's.
// A Location never changes once loaded.
var locations sync.Map // name -> *time.Location

// location is the zone of that name, UTC when there is none.
func location(tz string) *time.Location {
	if l, ok := locations.Load(tz); ok {
		return l.(*time.Location)
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		// Not remembered: names come from profiles, and a bad one must not
		// take a slot for good.
		return time.UTC
	}
	locations.Store(tz, loc)
	return loc
}

func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func minutes(hhmm string) (int, bool) {
	h, m, ok := strings.Cut(hhmm, ":")
	if !ok {
		return 0, false
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return hh*60 + mm, true
}

// SkillRank is a level's position (1 beginner .. 4 expert), 0 when unknown.
func SkillRank(level string) int { return slices.Index(users.SkillLevels, level) + 1 }

// ProfileOf is the matching view of a user.
func ProfileOf(u *users.User, now time.Time) Profile {
	p := Profile{UserID: u.ID, Levels: make(map[string]int, len(u.Sports)), RadiusKM: u.TravelRadiusKM,
		Week: WeekOf(u.Availability, u.Timezone, now), ActiveAt: u.UpdatedAt}
	for _, s := range u.Sports {
		p.Levels[s] = SkillRank(u.SkillLevels[s])
	}
	if u.Latitude != nil && u.Longitude != nil {
		p.Lat, p.Lon = *u.Latitude, *u.Longitude
	}
	return p
}

// EncodeLevels writes sports and ranks for the index: "tennis=2,padel=0".
func EncodeLevels(levels map[string]int) string {
	keys := make([]string, 0, len(levels))
	for k := range levels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strconv.Itoa(levels[k]))
	}
	return b.String()
}

// DecodeLevels reads EncodeLevels.
func DecodeLevels(s string) map[string]int {
	out := map[string]int{}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(v)
		out[k] = n
	}
	return out
}
