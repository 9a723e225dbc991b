package wire

import (
	"strings"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
)

// TestCheckText: the free-text rule refuses each kind of bad text with its
// code and the field named, and lets ordinary text (accents, emoji, tabs,
// line breaks where allowed) through.
func TestCheckText(t *testing.T) {
	for _, c := range []struct {
		s         string
		max       int
		multiline bool
		code      string
	}{
		{"Sunday five-a-side, Parc de la Tête d'Or ⚽", 100, false, ""},
		{"line one\nline two\ttabbed", 100, true, ""},
		{"line one\nline two", 100, false, "invalid_text"},
		{"bell\a", 100, true, "invalid_text"},
		{"\xff\xfe", 100, true, "invalid_text"},
		{"evil \u202e txt.exe", 100, true, "invalid_text"},
		{"isolate \u2067 here", 100, false, "invalid_text"},
		{strings.Repeat("é", 11), 10, false, "too_long"},
		{strings.Repeat("é", 10), 10, false, ""},
	} {
		err := CheckText("title", c.s, c.max, c.multiline)
		if c.code == "" {
			if err != nil {
				t.Errorf("%q: %v", c.s, err)
			}
			continue
		}
		e, ok := apperr.As(err)
		if !ok || e.Code != c.code || e.Param != "title" {
			t.Errorf("%q: got %v, want %s on title", c.s, err, c.code)
		}
	}
}
