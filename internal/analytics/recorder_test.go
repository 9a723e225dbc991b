package analytics

import (
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clock"
)

// BenchmarkRecord is the request path's share of counting: one Record call.
func BenchmarkRecord(b *testing.B) {
	r := NewRecorder(nil, clock.Real{}, nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			r.Record("usr_1", "key_1", "GET /v1/users/me", "usr_1", 200, time.Duration(i%5000)*time.Microsecond)
			i++
		}
	})
}

func TestSketchQuantiles(t *testing.T) {
	s := Sketch{}
	for us := int64(1); us <= 10000; us++ {
		s.Add(Bin(us*100), 1) // 0.1 ms to 1 s, evenly
	}
	for _, c := range []struct{ q, want float64 }{{0.5, 500}, {0.95, 950}, {0.99, 990}} {
		got := s.Quantile(c.q)
		if got < c.want*0.97 || got > c.want*1.03 {
			t.Errorf("q%.2f = %v ms, want %v ms within the sketch's accuracy", c.q, got, c.want)
		}
	}
	if (Sketch{}).Quantile(0.5) != 0 {
		t.Error("an empty sketch has no quantile")
	}
}
