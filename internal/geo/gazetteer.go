// Package geo is the offline gazetteer: GeoNames' populated places of 1000
// people or more (see ATTRIBUTION.md), shipped in the binary. It resolves a
// free-text place label to a position ("Springfield" is the most populous
// one; "Springfield, IL", "paris tx", "München, Deutschland" are what a
// person means by them) and autocompletes labels for client apps.
package geo

//go:generate go run ./gen -out .

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/matchpoint-api/matchpoint/internal/geo/names"
)

//go:embed cities.tsv.gz
var citiesGz []byte

//go:embed countries.tsv
var countriesTSV string

// Place is a populated place.
type Place struct {
	Name        string
	Admin1      string // GeoNames first-level division code (a state: "IL")
	Admin1Name  string // its name, for the countries admin1.go knows; else empty
	Country     string // ISO 3166-1 alpha-2
	CountryName string
	Lat, Lon    float64
	Population  int
	Timezone    string // IANA name
}

// Label is how the place is written back to people: "Springfield, Illinois,
// United States".
func (p Place) Label() string {
	parts := []string{p.Name}
	if p.Admin1Name != "" && p.Admin1Name != p.Name {
		parts = append(parts, p.Admin1Name)
	}
	return strings.Join(append(parts, p.CountryName), ", ")
}

// entry is one name of a place in the index.
type entry struct {
	place int32 // index into places: smaller is more populous
	alt   bool  // an alternate name, not the place's own
}

type keyed struct {
	key string
	entry
}

// Gazetteer is the loaded data.
type Gazetteer struct {
	places    []Place
	byKey     map[string][]entry // folded name -> places, most populous first
	sorted    []keyed            // every (name, place), by name, for prefixes
	countries map[string]string  // folded country name or code -> code
	admin1    map[string]string  // "CC/folded name or code" -> admin1 code
}

// Default returns the embedded gazetteer, loading it on first use (about a
// second of work, so the service warms it up at start).
var Default = sync.OnceValue(func() *Gazetteer {
	g, err := load(citiesGz, countriesTSV)
	if err != nil {
		panic(fmt.Sprintf("geo: embedded data: %v", err))
	}
	return g
})

func load(gz []byte, countries string) (*Gazetteer, error) {
	g := &Gazetteer{byKey: make(map[string][]entry, 400000), countries: map[string]string{}, admin1: map[string]string{}}
	countryName := map[string]string{}
	for _, line := range strings.Split(countries, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("countries.tsv: bad line %q", line)
		}
		countryName[f[0]] = f[1]
		for _, k := range strings.Split(f[2], ",") {
			if _, taken := g.countries[k]; !taken {
				g.countries[k] = f[0]
			}
		}
	}
	for cc, divs := range admin1Names {
		for code, ns := range divs {
			g.admin1[cc+"/"+strings.ToLower(code)] = code
			for _, n := range ns {
				g.admin1[cc+"/"+names.Fold(n)] = code
			}
		}
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	g.places = make([]Place, 0, 140000)
	g.sorted = make([]keyed, 0, 1000000)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 8 {
			return nil, fmt.Errorf("cities.tsv: bad line %q", sc.Text())
		}
		lat, err1 := strconv.ParseFloat(f[2], 64)
		lon, err2 := strconv.ParseFloat(f[3], 64)
		pop, err3 := strconv.Atoi(f[6])
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("cities.tsv: bad numbers in %q", sc.Text())
		}
		p := Place{Name: f[0], Country: f[4], CountryName: countryName[f[4]], Admin1: f[5], Lat: lat, Lon: lon, Population: pop, Timezone: f[7]}
		if p.CountryName == "" {
			p.CountryName = p.Country
		}
		if ns := admin1Names[p.Country][p.Admin1]; len(ns) > 0 {
			p.Admin1Name = ns[0]
		}
		i := int32(len(g.places))
		g.places = append(g.places, p)
		g.add(names.Fold(p.Name), entry{place: i})
		if f[1] != "" {
			for _, k := range strings.Split(f[1], ",") {
				g.add(k, entry{place: i, alt: true})
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(g.sorted, func(a, b keyed) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return int(a.place - b.place)
	})
	return g, nil
}

func (g *Gazetteer) add(key string, e entry) {
	if key == "" {
		return
	}
	for _, x := range g.byKey[key] {
		if x.place == e.place {
			return
		}
	}
	g.byKey[key] = append(g.byKey[key], e)
	g.sorted = append(g.sorted, keyed{key: key, entry: e})
}

// weight ranks candidates for a name: the population, with a place's own
// name counting five times more than an alternate one, so that "Saint
// Petersburg" is the Russian city but "Springfield" is not some larger
// place that was once called so.
func (g *Gazetteer) weight(e entry) float64 {
	w := float64(g.places[e.place].Population) + 1
	if e.alt {
		w /= 5
	}
	return w
}

// qualifies reports whether a folded qualifier ("il", "illinois", "usa",
// "deutschland") describes place p.
func (g *Gazetteer) qualifies(p *Place, q string) bool {
	if cc, ok := g.countries[q]; ok && cc == p.Country {
		return true
	}
	if code, ok := g.admin1[p.Country+"/"+q]; ok && code == p.Admin1 {
		return true
	}
	return len(q) >= 2 && strings.EqualFold(q, p.Admin1)
}

func (g *Gazetteer) best(name string, quals []string) (int32, bool) {
	bestW, found := -1.0, int32(-1)
	for _, e := range g.byKey[name] {
		p := &g.places[e.place]
		ok := true
		for _, q := range quals {
			if !g.qualifies(p, q) {
				ok = false
				break
			}
		}
		if ok {
			if w := g.weight(e); w > bestW {
				bestW, found = w, e.place
			}
		}
	}
	return found, found >= 0
}

// Resolve finds the place a label means, or false.
func (g *Gazetteer) Resolve(label string) (Place, bool) {
	var parts []string
	for _, p := range strings.Split(label, ",") {
		if f := names.Fold(p); f != "" {
			parts = append(parts, f)
		}
	}
	if len(parts) == 0 {
		return Place{}, false
	}
	if i, ok := g.best(parts[0], parts[1:]); ok {
		return g.places[i], true
	}
	if len(parts) > 1 {
		return Place{}, false
	}
	// "paris tx", "springfield illinois usa": a name followed by one or two
	// qualifiers, without commas. Longer names are tried first.
	words := strings.Fields(parts[0])
	for cut := len(words) - 1; cut >= 1; cut-- {
		name, rest := strings.Join(words[:cut], " "), words[cut:]
		if i, ok := g.best(name, []string{strings.Join(rest, " ")}); ok {
			return g.places[i], true
		}
		for k := 1; k < len(rest); k++ {
			if i, ok := g.best(name, []string{strings.Join(rest[:k], " "), strings.Join(rest[k:], " ")}); ok {
				return g.places[i], true
			}
		}
	}
	return Place{}, false
}

// Complete returns up to limit places whose name starts with what was typed,
// most populous first. Text after a comma narrows them by country or state
// ("spring, il", "paris, fr").
func (g *Gazetteer) Complete(typed string, limit int) []Place {
	parts := strings.Split(typed, ",")
	prefix := names.Fold(parts[0])
	if prefix == "" || limit <= 0 {
		return nil
	}
	var quals []string
	for _, p := range parts[1:] {
		if f := names.Fold(p); f != "" {
			quals = append(quals, f)
		}
	}
	lo, _ := slices.BinarySearchFunc(g.sorted, prefix, func(k keyed, p string) int { return strings.Compare(k.key, p) })
	type hit struct {
		place int32
		w     float64
	}
	var hits []hit
	seen := map[int32]int{}
	for i := lo; i < len(g.sorted) && strings.HasPrefix(g.sorted[i].key, prefix); i++ {
		e := g.sorted[i].entry
		p := &g.places[e.place]
		if !g.qualifiesPrefix(p, quals) {
			continue
		}
		w := g.weight(e)
		if g.sorted[i].key == prefix {
			w *= 10 // the whole name typed: Paris before Parisot
		}
		if j, ok := seen[e.place]; ok {
			hits[j].w = math.Max(hits[j].w, w)
			continue
		}
		seen[e.place] = len(hits)
		hits = append(hits, hit{e.place, w})
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		if a.w != b.w {
			if a.w > b.w {
				return -1
			}
			return 1
		}
		return int(a.place - b.place)
	})
	out := make([]Place, 0, min(limit, len(hits)))
	for _, h := range hits[:min(limit, len(hits))] {
		out = append(out, g.places[h.place])
	}
	return out
}

// qualifiesPrefix is qualifies for the last qualifier still being typed.
func (g *Gazetteer) qualifiesPrefix(p *Place, quals []string) bool {
	for i, q := range quals {
		if g.qualifies(p, q) {
			continue
		}
		if i < len(quals)-1 {
			return false
		}
		if !strings.HasPrefix(names.Fold(p.CountryName), q) && !strings.HasPrefix(names.Fold(p.Admin1Name), q) {
			return false
		}
	}
	return true
}

// Places returns every place, most populous first. The slice is shared: do
// not change it.
func (g *Gazetteer) Places() []Place { return g.places }

// Geocode resolves a label to the coordinates of the place it names (the
// users service's Geocoder).
func (g *Gazetteer) Geocode(label string) (lat, lon float64, ok bool) {
	p, ok := g.Resolve(label)
	return p.Lat, p.Lon, ok
}
