package sports

import "testing"

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"Tennis":            "tennis",
		"  table_TENNIS ":   "table tennis",
		"Ping-Pong":         "table tennis",
		"soccer":            "football",
		"Beach  Volleyball": "beach volleyball",
	} {
		got, ok := Normalize(in)
		if !ok || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "quidditch", "tennis!"} {
		if got, ok := Normalize(bad); ok {
			t.Errorf("Normalize(%q) = %q, want unknown", bad, got)
		}
	}
	seen := map[string]bool{}
	for _, n := range All() {
		if seen[n] {
			t.Errorf("duplicate sport %q", n)
		}
		seen[n] = true
		if c, _ := Normalize(n); c != n {
			t.Errorf("canonical %q normalises to %q", n, c)
		}
	}
}
