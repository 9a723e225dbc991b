// Package synth makes realistic synthetic people for demo data, benchmarks
// and the ranking quality check: names, sports and levels with plausible
// popularity, homes around real places of the gazetteer (more people where
// more people live), the place's time zone, weekly availability and a last
// activity. It only builds values; the store writes them in bulk.
package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/geo"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/sports"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

var firstNames = strings.Fields(`Ada Adam Aisha Alex Ana Andrea Anna Ben Bruno Carla Carlos Chen Chloe Daniel David Elena Emma Eva
	Fatima Felix Grace Hana Hugo Ines Ivan Jack James Jin Julia Kai Karin Lars Laura Leo Lina Lucas Luis Maria Mateo Maya Mei
	Mohammed Nadia Noah Nora Olga Omar Oscar Paul Priya Rafael Rosa Sara Sofia Tariq Tom Valentina Wei Yara Yusuf Zoe`)

var lastNames = strings.Fields(`Smith Garcia Muller Rossi Dubois Silva Kim Tanaka Novak Kowalski Jensen Nielsen Martin Lopez
	Schmidt Costa Santos Ivanova Petrov Haddad Khan Patel Nguyen Wang Li Chen Sato Suzuki Brown Wilson Taylor Moreau Bernard
	Fischer Weber Romano Ricci Ferreira Almeida Hansen Larsen Berg Virtanen Horvath Nagy Popescu Yilmaz Demir Cohen Levi`)

// sportWeight is how much more common a sport is among players than the
// rarest ones (unlisted sports weigh 1).
var sportWeight = map[string]float64{
	"running": 14, "football": 14, "tennis": 10, "cycling": 10, "swimming": 9, "basketball": 8, "weightlifting": 8,
	"yoga": 7, "hiking": 7, "volleyball": 5, "badminton": 5, "padel": 5, "table tennis": 5, "golf": 4, "climbing": 4,
	"squash": 3, "martial arts": 3, "pickleball": 3, "walking": 3, "futsal": 3, "skiing": 3, "surfing": 2,
}

// Options shape a generation.
type Options struct {
	Seed int64
	// Places restricts homes to these places (default: every place of the
	// gazetteer, weighted by population).
	Places []geo.Place
	// Now is the time activity is measured back from.
	Now time.Time
	// Tag makes usernames unique across runs on one database.
	Tag string
}

// Person is a generated profile and the place it lives around.
type Person struct {
	User  *users.User
	Place *geo.Place
}

// Generator makes people.
type Generator struct {
	rnd     *rand.Rand
	places  []geo.Place
	cum     []float64 // cumulative population weights
	sports  []string
	scum    []float64
	now     time.Time
	tag     string
	counter int
}

// New returns a generator.
func New(o Options) *Generator {
	g := &Generator{rnd: rand.New(rand.NewPCG(uint64(o.Seed), uint64(o.Seed)^0x9e3779b97f4a7c15)), places: o.Places, now: o.Now, tag: o.Tag}
	if g.places == nil {
		g.places = geo.Default().Places()
	}
	if g.now.IsZero() {
		g.now = time.Now().UTC()
	}
	total := 0.0
	g.cum = make([]float64, len(g.places))
	for i, p := range g.places {
		total += float64(max(p.Population, 1000))
		g.cum[i] = total
	}
	total = 0
	for _, s := range sports.All() {
		w := sportWeight[s]
		if w == 0 {
			w = 1
		}
		total += w
		g.sports = append(g.sports, s)
		g.scum = append(g.scum, total)
	}
	return g
}

func pick(r *rand.Rand, cum []float64) int {
	x := r.Float64() * cum[len(cum)-1]
	return sort.SearchFloat64s(cum, x)
}

// Place picks a home place, weighted by population.
func (g *Generator) Place() *geo.Place { return &g.places[pick(g.rnd, g.cum)] }

// Spread is how far from a place's centre people live (the standard
// deviation, km): a few km in a village, up to ~15 km in a metropolis.
func Spread(p *geo.Place) float64 {
	return 1 + 2.2*math.Log10(math.Max(1, float64(p.Population)/1000))
}

// Near returns a position around (lat, lon) at a normal distance of sigma km.
func (g *Generator) Near(lat, lon, sigmaKM float64) (float64, float64) {
	dy, dx := g.rnd.NormFloat64()*sigmaKM, g.rnd.NormFloat64()*sigmaKM
	lat2 := math.Max(-89.9, math.Min(89.9, lat+dy/111.2))
	lon2 := lon + dx/(111.2*math.Max(0.05, math.Cos(lat*math.Pi/180)))
	if lon2 > 180 {
		lon2 -= 360
	} else if lon2 < -180 {
		lon2 += 360
	}
	return math.Round(lat2*1e5) / 1e5, math.Round(lon2*1e5) / 1e5
}

// Sport picks a sport by popularity.
func (g *Generator) Sport() string { return g.sports[pick(g.rnd, g.scum)] }

// Level picks a skill level: most people are beginners or intermediate.
func (g *Generator) Level() string {
	x := g.rnd.Float64()
	switch {
	case x < 0.30:
		return "beginner"
	case x < 0.65:
		return "intermediate"
	case x < 0.90:
		return "advanced"
	}
	return "expert"
}

// Availability picks one to four weekly slots, in the person's own time.
func (g *Generator) Availability() []users.Slot {
	n := 1 + g.rnd.IntN(4)
	var out []users.Slot
	for range n {
		var s users.Slot
		switch g.rnd.IntN(3) {
		case 0: // a weekday evening
			s = users.Slot{Day: users.Weekdays[g.rnd.IntN(5)], Start: fmt.Sprintf("%02d:00", 17+g.rnd.IntN(3)), End: "21:00"}
		case 1: // a weekend morning or afternoon
			h := []int{8, 9, 10, 14, 15}[g.rnd.IntN(5)]
			s = users.Slot{Day: users.Weekdays[5+g.rnd.IntN(2)], Start: fmt.Sprintf("%02d:00", h), End: fmt.Sprintf("%02d:00", h+3)}
		default: // an early morning or a lunch break
			h := []int{6, 7, 12}[g.rnd.IntN(3)]
			s = users.Slot{Day: users.Weekdays[g.rnd.IntN(7)], Start: fmt.Sprintf("%02d:00", h), End: fmt.Sprintf("%02d:00", h+1)}
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// ActiveAgo is how long ago someone was last active: many recently, some
// long ago.
func (g *Generator) ActiveAgo() time.Duration {
	return time.Duration(g.rnd.ExpFloat64() * 20 * 24 * float64(time.Hour))
}

// Person makes one person living around a place picked by population.
func (g *Generator) Person() Person {
	p := g.Place()
	lat, lon := g.Near(p.Lat, p.Lon, Spread(p))
	return g.PersonAt(p, lat, lon)
}

// PersonAt makes one person living at (lat, lon), near place p.
func (g *Generator) PersonAt(p *geo.Place, lat, lon float64) Person {
	g.counter++
	first, last := firstNames[g.rnd.IntN(len(firstNames))], lastNames[g.rnd.IntN(len(lastNames))]
	username := fmt.Sprintf("%s.%s.%s%d", strings.ToLower(first), strings.ToLower(last), g.tag, g.counter)
	if len(username) > users.MaxUsername {
		username = fmt.Sprintf("p.%s%d", g.tag, g.counter)
	}
	var sp []string
	for range 1 + g.rnd.IntN(3) {
		if s := g.Sport(); !slices.Contains(sp, s) {
			sp = append(sp, s)
		}
	}
	levels := map[string]string{}
	for _, s := range sp {
		if g.rnd.Float64() < 0.9 {
			levels[s] = g.Level()
		}
	}
	privacy := users.DefaultPrivacy
	switch x := g.rnd.Float64(); {
	case x < 0.04:
		privacy.Discoverable = false
	case x < 0.07:
		privacy.ProfileVisibility = users.VisibilityMatches
	case x < 0.09:
		privacy.ProfileVisibility = users.VisibilityPrivate
	}
	updated := g.now.Add(-g.ActiveAgo()).Truncate(time.Second)
	created := updated.Add(-time.Duration(g.rnd.IntN(365*24)) * time.Hour)
	u := &users.User{
		ID: ids.New(ids.User), Email: username + "@example.com", Username: username, FirstName: first, LastName: last,
		Sports: sp, SkillLevels: levels, Location: p.Label(), Latitude: &lat, Longitude: &lon, LocationSource: users.LocationGazetteer,
		TravelRadiusKM: []float64{10, 15, 25, 25, 25, 40, 60}[g.rnd.IntN(7)], Timezone: p.Timezone, Availability: g.Availability(),
		Privacy: privacy, Role: auth.RoleMember, Tier: users.TierFree, CreatedAt: created, UpdatedAt: updated,
	}
	if u.Timezone == "" {
		u.Timezone = "UTC"
	}
	return Person{User: u, Place: p}
}

// Rand is the generator's source, for callers that plant structure.
func (g *Generator) Rand() *rand.Rand { return g.rnd }
