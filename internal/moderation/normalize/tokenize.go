package normalize

import (
	"math"
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
	// A leading "!" or "|" may be a letter ("!'ll", "|ove"): kept before a
	// letter, an apostrophe or a digit.
	for i < j && strings.ContainsRune("'!|+", b[i]) {
		if (b[i] == '!' || b[i] == '|') && i+1 < j && (unicode.IsLetter(b[i+1]) || b[i+1] == '\'' || unicode.IsDigit(b[i+1])) {
			break
		}
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
		if n > 0 && !t.runGap(ps[n-1].end, ps[n].start) {
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

// runGap reports whether Base[i:j] separates two letters of one spaced-out
// word: one separator, or a separator, an apostrophe and a separator
// ("I ' l l", "d.o.n.'.t"); never two spaces, which separate words.
func (t *Text) runGap(i, j int) bool {
	switch j - i {
	case 1:
		return true
	case 2, 3:
		spaces, quotes := 0, 0
		for _, r := range t.Base[i:j] {
			switch {
			case r == ' ':
				spaces++
			case r == '\'':
				quotes++
			case wordRune(r):
				return false
			}
		}
		if quotes > 1 {
			return false
		}
		return spaces < 2 || j-i == 3 && t.Base[i+1] == '\''
	}
	return false
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

// segment splits s into words of v, allowing stretches it does not know
// at a cost ("bakerstreet": "baker" "street"); nil when the best split is
// the whole run as one unknown stretch.
func segment(s string, v *Vocab) []int {
	if v == nil {
		return nil
	}
	r := []rune(s)
	n := len(r)
	const unknownBase, unknownPerLetter = 1.0, 0.5
	best := make([]float64, n+1)
	from := make([]int, n+1)
	for i := 1; i <= n; i++ {
		best[i] = math.Inf(1)
		for j := 0; j < i; j++ {
			cost := unknownBase + unknownPerLetter*float64(i-j)
			if i-j <= v.maxLen && v.Has(string(r[j:i])) {
				cost = 1
			}
			if c := best[j] + cost; c < best[i] {
				best[i], from[i] = c, j
			}
		}
	}
	var cuts []int
	for i := n; i > 0; i = from[i] {
		cuts = append(cuts, i)
	}
	if len(cuts) == 1 && !v.Has(s) {
		return nil
	}
	for a, b := 0, len(cuts)-1; a < b; a, b = a+1, b-1 {
		cuts[a], cuts[b] = cuts[b], cuts[a]
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
		if w, ok := leetOnly(raw, v); ok {
			tok.Word, tok.Letters, tok.Obfuscated = w, true, true
		}
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
	if !v.Has(word) {
		if alt, ok := iOrL(raw, v); ok {
			return alt, true
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

// iOrL tries every reading of the characters that stand for either i or l
// ("k11l", "1i7t13"), up to four of them, and returns one the vocabulary
// knows.
func iOrL(raw []rune, v *Vocab) (string, bool) {
	var amb []int
	w := make([]rune, 0, len(raw))
	for _, r := range raw {
		if r == '\'' || r == '*' {
			continue
		}
		if _, ok := leetL[r]; ok {
			amb = append(amb, len(w))
		}
		if m, ok := leet[r]; ok {
			r = m
		}
		w = append(w, r)
	}
	if len(amb) == 0 || len(amb) > 4 || v == nil {
		return "", false
	}
	for mask := 1; mask < 1<<len(amb); mask++ {
		for k, p := range amb {
			if mask&(1<<k) != 0 {
				w[p] = 'l'
			} else {
				w[p] = 'i'
			}
		}
		if v.Has(string(w)) {
			return string(w), true
		}
	}
	return "", false
}

// leetOnly reads a token of digits and symbols alone ("@11" is "all") when
// the reading is a known word; plain numbers stay numbers.
func leetOnly(raw []rune, v *Vocab) (string, bool) {
	symbols := false
	for _, r := range raw {
		if _, ok := leet[r]; !ok {
			return "", false
		}
		if !isASCIIDigit(r) {
			symbols = true
		}
	}
	if !symbols || len(raw) < 2 {
		return "", false
	}
	w := make([]rune, len(raw))
	for i, r := range raw {
		w[i] = leet[r]
	}
	if v.Has(string(w)) {
		return string(w), true
	}
	return iOrL(raw, v)
}

func isASCIIDigit(r rune) bool { return r >= '0' && r <= '9' }
