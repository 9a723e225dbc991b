package names

import "testing"

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"München":          "munchen",
		"  Saint-Étienne ": "saint etienne",
		"Springfield, IL":  "springfield il",
		"Straße":           "strasse",
		"Łódź":             "lodz",
		"St. Louis":        "st louis",
		"Москва":           "москва",
		"":                 "",
	} {
		if got := Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
}
