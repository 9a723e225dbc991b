package store

import (
	"math"
	"strconv"
	"strings"

	"github.com/matchpoint-api/matchpoint/internal/events"
)

// Place cells put an event's position into SQLite's full-text index as
// words: the grid cells holding it at five sizes. "Words near a place"
// then becomes one full-text query, "the words, in one of these cells",
// which the index answers by intersecting posting lists; without them it
// would list every event with the words and test each one's position.

// cellSizes are the grid sizes, in degrees: from about 5.5 km to 2,800 km
// north to south; each divides 360, so cells wrap at the antimeridian.
var cellSizes = []float64{0.05, 0.25, 1.25, 5, 30}

// maxCells bounds the cells a search lists: the finest size with at most
// this many cells over the search's box is used. Each listed cell is a
// posting list the index merges, which costs far more than a few extra
// events to test, so the box is covered with few, larger cells.
const maxCells = 12

func cellToken(level, ix, iy int) string {
	return "g" + strconv.Itoa(level+1) + "x" + strconv.Itoa(ix) + "y" + strconv.Itoa(iy)
}

// cellIndex is the cell of a coordinate along one axis; longitudes wrap.
func cellIndex(v, offset, size float64, wrap int) int {
	i := int(math.Floor((v + offset) / size))
	if wrap > 0 {
		i = ((i % wrap) + wrap) % wrap
	}
	return i
}

// placeCells is the place_cells value of a position ("" without one).
func placeCells(lat, lon *float64) string {
	if lat == nil || lon == nil {
		return ""
	}
	toks := make([]string, len(cellSizes))
	for l, size := range cellSizes {
		toks[l] = cellToken(l, cellIndex(*lon, 180, size, int(math.Round(360/size))), cellIndex(*lat, 90, size, 0))
	}
	return strings.Join(toks, " ")
}

// cellsNear lists the tokens of the cells that cover the box of radius km
// around c, at the finest size with at most maxCells of them (the coarsest
// size if none has so few, near a pole).
func cellsNear(c events.Point, radius float64) []string {
	dLat := radius / kmPerDegree
	lat0, lat1 := max(c.Lat-dLat, -90), min(c.Lat+dLat, 90)
	edge := max(math.Abs(lat0), math.Abs(lat1))
	allLon := edge >= 89.9
	dLon := 0.0
	if !allLon {
		dLon = radius / (kmPerDegree * math.Cos(edge*math.Pi/180))
		allLon = dLon >= 180
	}
	for l, size := range cellSizes {
		wrap := int(math.Round(360 / size))
		y0, y1 := cellIndex(lat0, 90, size, 0), cellIndex(lat1, 90, size, 0)
		var xs []int
		if allLon {
			for x := range wrap {
				xs = append(xs, x)
			}
		} else {
			x0 := int(math.Floor((c.Lon - dLon + 180) / size))
			x1 := int(math.Floor((c.Lon + dLon + 180) / size))
			for x := x0; x <= x1 && len(xs) < wrap; x++ {
				xs = append(xs, ((x%wrap)+wrap)%wrap)
			}
		}
		if (y1-y0+1)*len(xs) > maxCells && l < len(cellSizes)-1 {
			continue // the coarsest size serves even so: at most a few rows of 12
		}
		var toks []string
		for y := y0; y <= y1; y++ {
			for _, x := range xs {
				toks = append(toks, cellToken(l, x, y))
			}
		}
		return toks
	}
	return nil
}
