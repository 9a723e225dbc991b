package moderation

import (
	"strings"
	"unicode"

	"github.com/matchpoint-api/matchpoint/internal/moderation/normalize"
)

// detectSpamStyle scores how a text is written rather than what it says:
// shouting in capitals, runs of exclamation marks, the same word over and
// over.
func detectSpamStyle(text string, t *normalize.Text, s *scorer) {
	upper, letters := 0, 0
	for _, r := range text {
		if unicode.IsLetter(r) {
			letters++
			if unicode.IsUpper(r) {
				upper++
			}
		}
	}
	sp := idx(Spam)
	if letters >= 15 && float64(upper) >= 0.6*float64(letters) {
		s.add(sp, 0.3, 0, 0)
	}
	if strings.Contains(text, "!!!") {
		s.add(sp, 0.2, 0, 0)
	}
	counts := map[string]int{}
	for _, tok := range t.Tokens {
		if len(tok.Word) >= 3 {
			counts[tok.Word]++
		}
	}
	for _, n := range counts {
		if n >= 3 {
			s.add(sp, 0.35, 0, 0)
			break
		}
	}
}
