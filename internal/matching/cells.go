package matching

import "math"

// The index keys people by a grid of cells CellDeg degrees on a side
// (about 5.5 km north-south), numbered row by row from the south-west. A
// search reads, for each row of cells its circle touches, one range of
// cell numbers: a plain B-tree range on both engines.
const (
	CellDeg   = 0.05
	cellRows  = 3600 // 180 / CellDeg
	cellCols  = 7200 // 360 / CellDeg
	earthKM   = 6371.0088
	kmPerDeg  = math.Pi * earthKM / 180
	maxRowIdx = cellRows - 1
)

// Cell is the grid cell of a position.
func Cell(lat, lon float64) int64 {
	r, c := cellRow(lat), cellCol(lon)
	return int64(r)*cellCols + int64(c)
}

func cellRow(lat float64) int {
	r := int(math.Floor((lat + 90) / CellDeg))
	return max(0, min(maxRowIdx, r))
}

func cellCol(lon float64) int {
	c := int(math.Floor((lon + 180) / CellDeg))
	return ((c % cellCols) + cellCols) % cellCols
}

// CellRange is an inclusive range of cell numbers.
type CellRange struct{ Lo, Hi int64 }

// Ranges lists the cell ranges covering the box around (lat, lon) of half
// side km, leaving out the box of half side innerKM (0: none), which an
// earlier, smaller search has read already.
func Ranges(lat, lon, km, innerKM float64) []CellRange {
	var out []CellRange
	r0, r1, dc := box(lat, km)
	var i0, i1, idc int
	if innerKM > 0 {
		i0, i1, idc = box(lat, innerKM)
	}
	c := cellCol(lon)
	for r := r0; r <= r1; r++ {
		base := int64(r) * cellCols
		if innerKM > 0 && r >= i0 && r <= i1 {
			// Only the parts of the row left and right of the inner box.
			out = appendCols(out, base, c-dc, c-idc-1)
			out = appendCols(out, base, c+idc+1, c+dc)
			continue
		}
		out = appendCols(out, base, c-dc, c+dc)
	}
	return out
}

// box is the rows and the half width in columns of a square of half side km.
func box(lat, km float64) (r0, r1, dc int) {
	dLat := km / kmPerDeg
	r0, r1 = cellRow(lat-dLat), cellRow(lat+dLat)
	// The widest row of the box is the one nearest a pole.
	far := math.Min(89.9, math.Max(math.Abs(lat-dLat), math.Abs(lat+dLat)))
	dLon := km / (kmPerDeg * math.Cos(far*math.Pi/180))
	dc = int(math.Ceil(dLon/CellDeg)) + 1
	if 2*dc+1 >= cellCols {
		dc = cellCols / 2
	}
	return r0, r1, dc
}

// appendCols adds columns from..to of a row, split where they wrap around
// the antimeridian.
func appendCols(out []CellRange, base int64, from, to int) []CellRange {
	if from > to {
		return out
	}
	if to-from+1 >= cellCols {
		return append(out, CellRange{base, base + cellCols - 1})
	}
	from, to = ((from%cellCols)+cellCols)%cellCols, ((to%cellCols)+cellCols)%cellCols
	if from <= to {
		return append(out, CellRange{base + int64(from), base + int64(to)})
	}
	return append(out, CellRange{base + int64(from), base + cellCols - 1}, CellRange{base, base + int64(to)})
}

// DistanceKM is the great-circle distance between two positions.
func DistanceKM(lat1, lon1, lat2, lon2 float64) float64 {
	const rad = math.Pi / 180
	dLat, dLon := (lat2-lat1)*rad, (lon2-lon1)*rad
	a := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Sin(dLon/2)*math.Sin(dLon/2)
	return 2 * earthKM * math.Asin(math.Min(1, math.Sqrt(a)))
}
