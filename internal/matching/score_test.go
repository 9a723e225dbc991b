package matching

import (
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/users"
)

func TestScoreSymmetricAndReciprocal(t *testing.T) {
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	a := Profile{UserID: "a", Levels: map[string]int{"tennis": 2, "padel": 3}, Lat: 48.85, Lon: 2.35, RadiusKM: 25,
		Week: WeekOf([]users.Slot{{Day: "monday", Start: "18:00", End: "21:00"}}, "Europe/Paris", now), ActiveAt: now.Add(-time.Hour)}
	b := Profile{UserID: "b", Levels: map[string]int{"tennis": 3}, Lat: 48.90, Lon: 2.30, RadiusKM: 10,
		Week: WeekOf([]users.Slot{{Day: "monday", Start: "17:00", End: "20:00"}}, "Europe/London", now), ActiveAt: now.Add(-20 * 24 * time.Hour)}
	ab, ba := Score(&a, &b, now), Score(&b, &a, now)
	ab.Explain(&b, now)
	if ab.Score != ba.Score || ab.Score <= 0 || ab.Score > 100 {
		t.Fatalf("score a->b %d, b->a %d", ab.Score, ba.Score)
	}
	if ab.AB != ba.BA || ab.BA != ba.AB {
		t.Fatalf("sides differ: %v/%v vs %v/%v", ab.AB, ab.BA, ba.AB, ba.BA)
	}
	// 18:00-21:00 in Paris and 17:00-20:00 in London are the same hours.
	if got := a.Week.And(b.Week).Hours(); got != 3 {
		t.Fatalf("common hours = %d, want 3", got)
	}
	// b plays only tennis, which a plays: b is fully served on sports, a half.
	if ab.Reasons[0].ForYou != 50 || ab.Reasons[0].ForThem != 100 {
		t.Fatalf("sports reason = %+v", ab.Reasons[0])
	}
	// The harmonic mean is below the arithmetic mean when the sides differ.
	if float64(ab.Score) > 100*(ab.AB+ab.BA)/2 {
		t.Fatalf("score %d above the mean of %v and %v", ab.Score, ab.AB, ab.BA)
	}
	// A closer, equally skilled, active partner scores higher.
	c := b
	c.Levels = map[string]int{"tennis": 2, "padel": 3}
	c.Lat, c.Lon, c.ActiveAt, c.Week = 48.851, 2.351, now, a.Week
	if Score(&a, &c, now).Score <= ab.Score {
		t.Fatal("a better partner does not score higher")
	}
}

func TestWeekBytesRoundTrip(t *testing.T) {
	w := WeekOf([]users.Slot{{Day: "sunday", Start: "22:30", End: "23:59"}, {Day: "monday", Start: "00:00", End: "02:00"}}, "Asia/Tokyo", time.Now())
	if WeekFromBytes(w.Bytes()) != w || w.Hours() != 4 {
		t.Fatalf("%v %d", w, w.Hours())
	}
}

func TestRanges(t *testing.T) {
	// Every cell within the box is in one of the ranges, and the inner box is left out.
	lat, lon := 48.85, 179.99
	all := Ranges(lat, lon, 30, 0)
	in := func(rs []CellRange, c int64) bool {
		for _, r := range rs {
			if c >= r.Lo && c <= r.Hi {
				return true
			}
		}
		return false
	}
	for _, p := range [][2]float64{{48.85, -179.9}, {49.1, 179.8}, {48.6, -179.7}} {
		if !in(all, Cell(p[0], p[1])) {
			t.Errorf("%v not covered", p)
		}
	}
	ring := Ranges(lat, lon, 30, 10)
	if in(ring, Cell(lat, lon)) || !in(ring, Cell(49.1, 179.8)) {
		t.Error("ring wrong")
	}
}

// BenchmarkScore is the cost of scoring one candidate, what a search pays
// for each of up to 1500 index rows.
func BenchmarkScore(b *testing.B) {
	now := time.Now()
	a := Profile{Levels: map[string]int{"tennis": 2, "padel": 3}, Lat: 48.85, Lon: 2.35, RadiusKM: 25,
		Week: WeekOf([]users.Slot{{Day: "monday", Start: "18:00", End: "21:00"}}, "Europe/Paris", now), ActiveAt: now}
	row := Profile{Levels: DecodeLevels("padel=3,tennis=2,running=1"), Lat: 48.9, Lon: 2.3, RadiusKM: 15, Week: a.Week, ActiveAt: now}
	for b.Loop() {
		_ = Score(&a, &row, now)
	}
}
