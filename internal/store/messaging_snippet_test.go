package store

import (
	"strings"
	"testing"
)

func TestTextSnippet(t *testing.T) {
	mark := func(s string) string { return strings.NewReplacer(markOpen, "[", markClose, "]").Replace(s) }
	for _, c := range []struct {
		body  string
		terms []string
		want  string
	}{
		{"Tennis <3 tennis and more tennis!", []string{"tennis"}, "[Tennis] <3 [tennis] and more [tennis]!"},
		{"Shall we play tennis? I played yesterday", []string{"playing"}, "Shall we [play] tennis? I [played] yesterday"},
		{"Un café à Montréal", []string{"cafe", "montreal"}, "Un [café] à [Montréal]"},
		{"nothing here", []string{"tennis"}, "nothing here"},
		// The window of 24 words with the most matches, cut with "…".
		{strings.Repeat("filler ", 30) + "tennis court tennis " + strings.Repeat("more ", 30), []string{"tennis"},
			"…" + strings.TrimSpace(strings.Repeat("filler ", 21)) + " [tennis] court [tennis]…"},
	} {
		if got := mark(textSnippet(c.body, c.terms)); got != c.want {
			t.Errorf("textSnippet(%q, %v)\n got %q\nwant %q", c.body, c.terms, got, c.want)
		}
	}
}

// A search finds what the index holds: the words of a message behind the
// key of its conversation, in any case and with diacritics.
func TestMessageTerms(t *testing.T) {
	k := convKey("cnv_a")
	if len(k) != convKeyDigits || k == convKey("cnv_b") {
		t.Fatalf("keys %q %q", k, convKey("cnv_b"))
	}
	if got := messageTerms("cnv_a", "Play tennis, 3pm?"); got != k+"Play "+k+"tennis "+k+"3pm" {
		t.Fatalf("terms %q", got)
	}
	if got := termsMatch([]string{"a", `b"c`}, []string{"cnv_a", "cnv_b"}); got != `("`+k+`a" AND "`+k+`b""c") OR ("`+convKey("cnv_b")+`a" AND "`+convKey("cnv_b")+`b""c")` {
		t.Fatalf("match %q", got)
	}
}
