package lexicon

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/matchpoint-api/matchpoint/internal/moderation/normalize"
)

func load(t *testing.T, src string) *Lexicon {
	t.Helper()
	l, err := LoadFS(fstest.MapFS{"l/a.txt": {Data: []byte(src)}}, "l")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func hits(l *Lexicon, text string) []string {
	nt := normalize.Normalize(text, l.Vocab)
	var out []string
	for _, h := range l.Match(nt.Tokens, false) {
		out = append(out, h.Rule.Category)
	}
	return out
}

func TestPatterns(t *testing.T) {
	l := load(t, `
set you = you, u, you all
set i_will = i will, ill, im going to
rule threat 0.9 = @i_will [2] kill|hurt @you
rule selfharm 0.9 = (kill|hurt) (myself|my self)
rule minor 0.8 = im #minor
rule phone 0.5 = call #num
rule opt 0.5 = send nudes?
`)
	cases := []struct {
		text string
		want string
	}{
		{"I will kill you", "threat"},
		{"im going to really badly hurt u", "threat"},
		{"i will go and then kill you", ""}, // gap of 3
		{"i will kill you all", "threat"},
		{"i want to kill my self", "selfharm"},
		{"im 14", "minor"},
		{"im 19", ""},
		{"call 0800", "phone"},
		{"call me", ""},
		{"send", "opt"},
		{"send nudes", "opt"},
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) {
			if got := strings.Join(hits(l, c.text), ","); got != c.want {
				t.Errorf("%q hits %q, want %q", c.text, got, c.want)
			}
		})
	}
}

func TestAllowancesMaskTheirCategoriesOnly(t *testing.T) {
	l := load(t, `
set sport_ctx = on court, in the final
rule threat 0.9 = kill you
rule other 0.5 = kill
allow threat = kill you [2] @sport_ctx ; unless @serious
allow threat = kill shot
set serious = not a joke
set rugby = rugby, scrum
rule sexual 0.5 = hooker
allow sexual = hooker ; if @rugby
`)
	cases := []struct{ text, want string }{
		{"I'll kill you", "threat,other"},
		{"I'll kill you on court tomorrow", "other"},
		{"I'll kill you in the final, not a joke", "threat,other"},
		{"what a kill shot", "other"},
		{"the hooker threw well at the rugby", ""},
		{"are you a hooker", "sexual"},
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) {
			if got := strings.Join(hits(l, c.text), ","); got != c.want {
				t.Errorf("%q hits %q, want %q", c.text, got, c.want)
			}
		})
	}
}

func TestListErrors(t *testing.T) {
	bad := map[string]string{
		"unknown set":        "rule x 0.5 = @nope",
		"bad weight":         "rule x 2 = a",
		"starts with a gap":  "rule x 0.5 = [2] a",
		"optional first":     "rule x 0.5 = a? b",
		"unbalanced bracket": "rule x 0.5 = (a|b c",
		"unknown kind":       "word x = a",
		"set twice":          "set a = b\nset a = c",
		"bad condition":      "rule x 0.5 = a ; when @b",
	}
	for name, src := range bad {
		t.Run(name, func(t *testing.T) {
			if _, err := LoadFS(fstest.MapFS{"l/a.txt": {Data: []byte(src)}}, "l"); err == nil {
				t.Errorf("%q loaded without an error", src)
			}
		})
	}
}

func TestEmbeddedListsLoad(t *testing.T) {
	l, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if r, a := l.Rules(); r < 300 || a < 20 {
		t.Fatalf("only %d rules and %d allowances", r, a)
	}
	if len(l.Set("slur")) == 0 || len(l.Set("sport_ctx")) == 0 {
		t.Fatal("expected sets missing")
	}
}

func TestMinorAge(t *testing.T) {
	for raw, want := range map[string]bool{"14": true, "14yo": true, "9": true, "17yrs": true, "18": false, "4": false,
		"u14": false, "140": false, "14kg": false, "": false} {
		if got := MinorAge(raw); got != want {
			t.Errorf("MinorAge(%q) = %v, want %v", raw, got, want)
		}
	}
}
