package eval

import (
	"strings"
	"testing"
)

func TestObfuscateChangesWordsDeterministically(t *testing.T) {
	text := "I will find you and make you regret this"
	for _, o := range Obfuscations {
		t.Run(o, func(t *testing.T) {
			a, b := Obfuscate(text, o, 7), Obfuscate(text, o, 7)
			if a != b {
				t.Fatalf("not deterministic: %q %q", a, b)
			}
			if a == text {
				t.Fatalf("%s left the text unchanged", o)
			}
		})
	}
	if got := Obfuscate("call 07911 123456 now", "spaced", 1); !strings.Contains(got, "07911 123456") {
		t.Errorf("numbers must stay intact: %q", got)
	}
}

func TestSplitsHoldEveryKindAndObfuscatedCopies(t *testing.T) {
	dev, err := Load(Dev)
	if err != nil {
		t.Fatal(err)
	}
	held, err := Load(HeldOut)
	if err != nil {
		t.Fatal(err)
	}
	clean := map[string]int{}
	ids := map[string]bool{}
	texts := map[string]bool{}
	for _, it := range append(dev, held...) {
		if ids[it.ID] {
			t.Fatalf("duplicate id %s", it.ID)
		}
		ids[it.ID] = true
		if it.Source == "" {
			clean[it.Kind]++
			if texts[it.Text] {
				t.Fatalf("text in both splits: %q", it.Text)
			}
			texts[it.Text] = true
		} else if !ids[it.Source] {
			t.Fatalf("%s: source %s unknown", it.ID, it.Source)
		}
	}
	total := 0
	for _, n := range clean {
		total += n
	}
	if total < 400 || len(clean) < 10 {
		t.Fatalf("%d clean texts in %d kinds", total, len(clean))
	}
}
