package store

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/matchpoint-api/matchpoint/internal/geo/names"
)

// snippetWords is how many words a snippet shows, as SQLite's snippet()
// was asked for.
const snippetWords = 24

// foldWord is a word as the tokenizer compares it: lower case, without
// diacritics (names.Fold, for a word that has any), stemmed.
func foldWord(w string) string {
	w = strings.ToLower(w)
	for _, r := range w {
		if r >= utf8.RuneSelf {
			w = names.Fold(w)
			break
		}
	}
	return porterStem(w)
}

// textSnippet is the part of body around its best run of matches of the
// search words (the window of snippetWords words holding the most of
// them), with "…" where it is cut and each matching word between markOpen
// and markClose. SQLite's index holds no text to cut snippets from (it
// keeps terms of conversations; messaging_terms.go), so they are made
// here, for the page alone.
func textSnippet(body string, terms []string) string {
	want := make(map[string]bool, len(terms))
	for _, t := range terms {
		want[foldWord(t)] = true
	}
	type word struct {
		start, end int
		match      bool
	}
	var words []word
	start := -1
	flush := func(end int) {
		if start >= 0 {
			words = append(words, word{start, end, want[foldWord(body[start:end])]})
			start = -1
		}
	}
	for i, r := range body {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			if start < 0 {
				start = i
			}
		} else {
			flush(i)
		}
	}
	flush(len(body))
	if len(words) == 0 {
		return body
	}
	// The window with the most matches; the first such.
	from, best, n := 0, -1, 0
	for i := range words {
		if words[i].match {
			n++
		}
		if i >= snippetWords && words[i-snippetWords].match {
			n--
		}
		if first := max(0, i-snippetWords+1); n > best {
			best, from = n, first
		}
	}
	to := min(len(words), from+snippetWords)
	var b strings.Builder
	b.Grow(len(body) + 16)
	at := 0
	if from > 0 {
		b.WriteString("…")
		at = words[from].start
	}
	for _, w := range words[from:to] {
		b.WriteString(body[at:w.start])
		if w.match {
			b.WriteString(markOpen + body[w.start:w.end] + markClose)
		} else {
			b.WriteString(body[w.start:w.end])
		}
		at = w.end
	}
	if to < len(words) {
		b.WriteString("…")
	} else {
		b.WriteString(body[at:])
	}
	return b.String()
}
