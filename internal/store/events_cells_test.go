package store

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/events"
)

// TestCellsCoverTheRadius: any position within the radius has one of its
// cells among those a search lists, including across the antimeridian and
// near a pole.
func TestCellsCoverTheRadius(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		center events.Point
		radius float64
	}{
		{events.Point{Lat: 45.764, Lon: 4.8357}, 25}, {events.Point{Lat: 45.764, Lon: 4.8357}, 1},
		{events.Point{Lat: 48.85, Lon: 2.35}, 500}, {events.Point{Lat: -33.87, Lon: 151.2}, 10},
		{events.Point{Lat: 0.01, Lon: 179.99}, 30}, {events.Point{Lat: -0.01, Lon: -179.99}, 30},
		{events.Point{Lat: 89.5, Lon: 10}, 100}, {events.Point{Lat: -78, Lon: 166}, 300},
	} {
		listed := cellsNear(c.center, c.radius)
		if len(listed) == 0 || len(listed) > 12*3 {
			t.Fatalf("%+v: %d cells", c, len(listed))
		}
		for range 2000 {
			// A point within the radius, by the search's own distance.
			r, th := c.radius*math.Sqrt(rng.Float64())*0.999, 2*math.Pi*rng.Float64()
			lat := c.center.Lat + r*math.Cos(th)/kmPerDegree
			if lat > 90 || lat < -90 {
				continue
			}
			lon := c.center.Lon + r*math.Sin(th)/(kmPerDegree*math.Cos((lat+c.center.Lat)/2*math.Pi/180))
			lon = math.Mod(lon+540, 360) - 180
			mine := strings.Fields(placeCells(&lat, &lon))
			if !slices.ContainsFunc(mine, func(tok string) bool { return slices.Contains(listed, tok) }) {
				t.Fatalf("%+v: (%.4f, %.4f) has cells %v, none listed", c, lat, lon, mine)
			}
		}
	}
	if got := placeCells(nil, nil); got != "" {
		t.Fatalf("no position: %q", got)
	}
}
