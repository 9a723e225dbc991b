package geo

import (
	"math"
	"testing"
)

func TestResolve(t *testing.T) {
	g := Default()
	for _, c := range []struct {
		label, name, country, admin1 string
	}{
		{"Springfield", "Springfield", "US", "MO"}, // the most populous of them
		{"Springfield, IL", "Springfield", "US", "IL"},
		{"springfield illinois", "Springfield", "US", "IL"},
		{"Springfield, Massachusetts, USA", "Springfield", "US", "MA"},
		{"Paris", "Paris", "FR", ""},
		{"Paris, France", "Paris", "FR", ""},
		{"paris tx", "Paris", "US", "TX"},
		{"Paris, Texas", "Paris", "US", "TX"},
		{"PARIS, ontario", "Paris", "CA", "08"},
		{"München", "München", "DE", "02"},
		{"Munich", "München", "DE", "02"},
		{"munchen, deutschland", "München", "DE", "02"},
		{"Muenchen", "München", "DE", "02"},
		{"Saint Petersburg", "Saint Petersburg", "RU", ""},
		{"St. Petersburg, FL", "Saint Petersburg", "US", "FL"},
		{"Köln", "Köln", "DE", ""},
		{"Cologne", "Köln", "DE", ""},
		{"São Paulo", "São Paulo", "BR", ""},
		{"sao paulo", "São Paulo", "BR", ""},
		{"Москва", "Moscow", "RU", ""},
		{"London", "London", "GB", ""},
		{"London, Ontario", "London", "CA", "08"},
		{"New York", "New York City", "US", "NY"},
	} {
		p, ok := g.Resolve(c.label)
		if !ok {
			t.Errorf("Resolve(%q): not found", c.label)
			continue
		}
		if p.Name != c.name || p.Country != c.country || (c.admin1 != "" && p.Admin1 != c.admin1) {
			t.Errorf("Resolve(%q) = %s (%s %s, pop %d), want %s in %s %s", c.label, p.Name, p.Country, p.Admin1, p.Population, c.name, c.country, c.admin1)
		}
	}
	for _, label := range []string{"", " , ", "Qwxzvbn", "Springfield, France", "Paris, Narnia"} {
		if p, ok := g.Resolve(label); ok {
			t.Errorf("Resolve(%q) = %+v, want nothing", label, p)
		}
	}
}

func TestComplete(t *testing.T) {
	g := Default()
	got := g.Complete("springf", 5)
	if len(got) != 5 || got[0].Name != "Springfield" {
		t.Fatalf("Complete(spring) = %+v", got)
	}
	il := g.Complete("springf, il", 3)
	if len(il) == 0 || il[0].Admin1 != "IL" || il[0].Label() != "Springfield, Illinois, United States" {
		t.Fatalf("Complete(springf, il) = %+v", il)
	}
	if p := g.Complete("par", 1); len(p) != 1 || p[0].Name != "Paris" || p[0].Country != "FR" {
		t.Fatalf("Complete(par) = %+v", p)
	}
	if p := g.Complete("paris, uni", 3); len(p) == 0 || p[0].Country != "US" {
		t.Fatalf("Complete(paris, uni) = %+v", p)
	}
	if len(g.Complete("", 5)) != 0 || len(g.Complete("zzzzqqq", 5)) != 0 {
		t.Fatal("nonsense completes")
	}
}

// TestAdmin1Codes checks the hand-written division table against the data:
// each division's code must be that of its best-known city.
func TestAdmin1Codes(t *testing.T) {
	g := Default()
	for label, want := range map[string]string{
		"Toronto": "CA/08", "Vancouver": "CA/02", "Montreal": "CA/10", "Calgary": "CA/01", "Halifax, Canada": "CA/07",
		"Sydney": "AU/02", "Melbourne, Australia": "AU/07", "Perth, Australia": "AU/08", "Brisbane": "AU/04",
		"Berlin": "DE/16", "Hamburg": "DE/04", "Stuttgart": "DE/01", "Cologne": "DE/07",
		"Glasgow": "GB/SCT", "Cardiff": "GB/WLS", "Belfast": "GB/NIR", "Chicago": "US/IL", "Houston": "US/TX",
	} {
		p, ok := g.Resolve(label)
		if !ok || p.Country+"/"+p.Admin1 != want {
			t.Errorf("%s: %s/%s, want %s", label, p.Country, p.Admin1, want)
		}
	}
}

func TestLabelAndFields(t *testing.T) {
	p, _ := Default().Resolve("paris tx")
	if p.Label() != "Paris, Texas, United States" || p.Timezone != "America/Chicago" || math.Abs(p.Lat-33.66) > 0.01 {
		t.Fatalf("%+v %q", p, p.Label())
	}
}
