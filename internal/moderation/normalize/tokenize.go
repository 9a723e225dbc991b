package normalize

import (
	"strings"
	"unicode"
)

// leetSymbols are the non-letters that can stand inside a word.
const leetSymbols = "@$!|*+€£¢§"

func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || strings.ContainsRune(leetSymbols, r)
}

type piece struct{ start, end int }

func (t *Text) tokenize(v *Vocab) {
	var pieces []piece
	b := t.Base
	for i := 0; i < len(b); {
		if !wordRune(b[i]) {
			i++
			continue
		}
		j := i
		for j < len(b) && wordRune(b[j]) {
			j++
		}
		if p, ok := trim(b, i, j); ok {
			pieces = append(pieces, p)
		}
		i = j
	}
	t.Tokens = make([]Token, 0, len(pieces))
	for i := 0; i < len(pieces); {
		if n := t.letterRun(pieces[i:]); n > 0 {
			t.joined(pieces[i:i+n], v)
			i += n
			continue
		}
		p := pieces[i]
		t.Tokens = append(t.Tokens, t.token(p.start, p.end, v))
		i++
	}
}

// trim drops what surrounds a word without being part of it: apostrophes
// used as quotes, exclamation marks, *emphasis*.
func trim(b []rune, i, j int) (piece, bool) {
	for i < j && strings.ContainsRune("'!|+", b[i]) {
		i++
	}
	if i < j && b[i] == '*' {
		for i < j && b[i] == '*' {
			i++
		}
		for j > i && b[j-1] == '*' {
			j--
		}
	}
	for j > i && strings.ContainsRune("'!|+", b[j-1]) {
		j--
	}
	return piece{i, j}, i < j
}

// letterRun returns how many pieces from the start form a run of single
// characters one separator apart ("k i l l", "k.i.l.l", "k-1-l-l"): at least
// three, two of them letters. 0 if none.
func (t *Text) letterRun(ps []piece) int {
	n, letters := 0, 0
	for n < len(ps) && ps[n].end-ps[n].start == 1 {
		if n > 0 && ps[n].start-ps[n-1].end != 1 {
			break
		}
		if unicode.IsLetter(t.Base[ps[n].start]) {
			letters++
		}
		n++
	}
	if n < 3 || letters < 2 {
		return 0
	}
	return n
}

// joined turns a run of single characters into words: the split into the
// fewest known words, or one token when no split covers the run.
func (t *Text) joined(ps []piece, v *Vocab) {
	letters := make([]rune, len(ps))
	for i, p := range ps {
		letters[i] = t.Base[p.start]
		if m, ok := leet[letters[i]]; ok {
			letters[i] = m
		}
	}
	if cuts := segment(string(letters), v); cuts != nil {
		prev := 0
		for _, c := range cuts {
			tok := t.token(ps[prev].start, ps[c-1].end, v)
			tok.Word, tok.Joined = string(letters[prev:c]), true
			tok.Raw = tok.Word
			t.Tokens = append(t.Tokens, tok)
			prev = c
		}
		return
	}
	tok := t.token(ps[0].start, ps[len(ps)-1].end, v)
	tok.Raw = string(letters)
	tok.Word, tok.Obfuscated = readWord([]rune(tok.Raw), v)
	tok.Joined = true
	t.Tokens = append(t.Tokens, tok)
}

// segment splits s (ASCII-ish letters) into the fewest words of v; nil if
// it cannot. Returns the end index of each word.
func segment(s string, v *Vocab) []int {
	if v == nil {
		return nil
	}
	r := []rune(s)
	n := len(r)
	const inf = 1 << 30
	best := make([]int, n+1)
	from := make([]int, n+1)
	for i := 1; i <= n; i++ {
		best[i] = inf
		for j := max(0, i-v.maxLen); j < i; j++ {
			if best[j] == inf || best[j]+1 >= best[i] {
				continue
			}
			if v.Has(string(r[j:i])) {
				best[i], from[i] = best[j]+1, j
			}
		}
	}
	if best[n] == inf {
		return nil
	}
	cuts := make([]int, best[n])
	for i, k := n, best[n]-1; i > 0; i, k = from[i], k-1 {
		cuts[k] = i
	}
	return cuts
}

// token builds the token for Base[start:end].
func (t *Text) token(start, end int, v *Vocab) Token {
	raw := t.Base[start:end]
	tok := Token{Raw: string(raw), Start: start, End: end}
	for _, r := range raw {
		if unicode.IsLetter(r) {
			tok.Letters = true
			break
		}
	}
	if !tok.Letters {
		tok.Word = tok.Raw
		return tok
	}
	if raw[0] == '@' && len(raw) > 1 {
		if w, _ := readWord(raw, v); !v.Has(w) {
			tok.Handle = true
			raw = raw[1:]
		}
	}
	tok.Word, tok.Obfuscated = readWord(raw, v)
	return tok
}

// readWord reads a word with letters: apostrophes dropped, leet read, masks
// filled, elongation undone, choosing readings the vocabulary knows.
func readWord(raw []rune, v *Vocab) (string, bool) {
	plain := true
	for _, r := range raw {
		if !unicode.IsLetter(r) || r == '\'' {
			plain = false
			break
		}
	}
	if plain && !hasRun(raw, 3) {
		return string(raw), false
	}
	w := make([]rune, 0, len(raw))
	masked := false
	for _, r := range raw {
		switch {
		case r == '\'':
		case r == '*':
			masked = true
			w = append(w, r)
		default:
			if m, ok := leet[r]; ok {
				r = m
			}
			w = append(w, r)
		}
	}
	obf := !plain
	if masked {
		if m, ok := v.wildcard(w); ok {
			return m, true
		}
		w = []rune(strings.ReplaceAll(string(w), "*", ""))
	}
	word := string(w)
	if !v.Has(word) && strings.ContainsAny(string(raw), "1|!") {
		alt := make([]rune, 0, len(raw))
		for _, r := range raw {
			if r == '\'' || r == '*' {
				continue
			}
			if m, ok := leetL[r]; ok {
				r = m
			} else if m, ok := leet[r]; ok {
				r = m
			}
			alt = append(alt, r)
		}
		if v.Has(string(alt)) {
			return string(alt), true
		}
	}
	if hasRun(w, 3) {
		if m, ok := v.fromCollapsed(word); ok {
			return m, true
		}
		if two := collapseRuns(word, 2); v.Has(two) {
			return two, true
		}
		return collapseRuns(word, 1), true
	}
	return word, obf
}

func hasRun(w []rune, n int) bool {
	c := 1
	for i := 1; i < len(w); i++ {
		if w[i] == w[i-1] && unicode.IsLetter(w[i]) {
			c++
			if c >= n {
				return true
			}
		} else {
			c = 1
		}
	}
	return false
}
