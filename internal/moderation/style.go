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
	if repeatedWord(t.Tokens) {
		s.add(sp, 0.35, 0, 0)
	}
}

// repeatedWord reports a word of three letters or more used three times or
// more ("SALE SALE SALE", "click here click here click here").
func repeatedWord(toks []normalize.Token) bool {
	limit := min(len(toks), 200) // messages; a long text is not scanned quadratically
	for i := 0; i < limit; i++ {
		w := toks[i].Word
		if len(w) < 3 {
			continue
		}
		n := 1
		for j := i + 1; j < limit; j++ {
			if toks[j].Word == w {
				if n++; n >= 3 {
					return true
				}
			}
		}
	}
	return false
}
