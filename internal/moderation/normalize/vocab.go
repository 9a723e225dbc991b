package normalize

import "sort"

// Vocab is the set of words the lists know. The normaliser consults it to
// choose between readings of an obfuscated word ("ki11": "kiii" or "kill"),
// to undo elongation ("kiiiilll") and to split runs of spaced-out letters
// ("k i l l y o u") back into words.
type Vocab struct {
	words     map[string]bool   // word -> preferred (a harmful term: wins ties)
	collapsed map[string]string // runs collapsed ("kil") -> word ("kill")
	byLen     map[int][]string  // for masked letters ("f*ck")
	maxLen    int
}

// NewVocab builds a vocabulary; preferred words win when a reading is
// ambiguous ("assss" reads "ass", not "as").
func NewVocab(words []string, preferred func(string) bool) *Vocab {
	v := &Vocab{words: map[string]bool{}, collapsed: map[string]string{}, byLen: map[int][]string{}}
	sorted := append([]string(nil), words...)
	sort.Strings(sorted)
	for _, w := range sorted {
		if w == "" || v.hasWord(w) {
			continue
		}
		p := preferred != nil && preferred(w)
		v.words[w] = p
		n := len([]rune(w))
		v.byLen[n] = append(v.byLen[n], w)
		if n > v.maxLen {
			v.maxLen = n
		}
	}
	for _, w := range sorted {
		c := collapseRuns(w, 1)
		old, ok := v.collapsed[c]
		if !ok || better(v, w, old) {
			v.collapsed[c] = w
		}
	}
	return v
}

func (v *Vocab) hasWord(w string) bool { _, ok := v.words[w]; return ok }

// better reports whether w is a better reading than old for an elongated
// token: a preferred word first, then the longer one.
func better(v *Vocab, w, old string) bool {
	if v.words[w] != v.words[old] {
		return v.words[w]
	}
	return len(w) > len(old)
}

// Has reports whether w is a known word.
func (v *Vocab) Has(w string) bool {
	if v == nil {
		return false
	}
	return v.hasWord(w)
}

func (v *Vocab) fromCollapsed(w string) (string, bool) {
	if v == nil {
		return "", false
	}
	s, ok := v.collapsed[collapseRuns(w, 1)]
	return s, ok
}

// wildcard finds the word that a token with masked letters stands for:
// same length, same visible letters, at least two of them visible.
func (v *Vocab) wildcard(pat []rune) (string, bool) {
	if v == nil {
		return "", false
	}
	visible := 0
	for _, r := range pat {
		if r != '*' {
			visible++
		}
	}
	if visible < 1 || pat[0] == '*' {
		return "", false
	}
	best, found := "", false
	for _, w := range v.byLen[len(pat)] {
		rw := []rune(w)
		ok := true
		for i, r := range pat {
			if r != '*' && r != rw[i] {
				ok = false
				break
			}
		}
		if ok && (!found || (v.words[w] && !v.words[best])) {
			best, found = w, true
		}
	}
	return best, found
}

// collapseRuns shortens every run of the same letter longer than max to
// max letters.
func collapseRuns(w string, max int) string {
	out := make([]rune, 0, len(w))
	var last rune
	n := 0
	for _, r := range w {
		if r == last {
			n++
		} else {
			last, n = r, 1
		}
		if n <= max {
			out = append(out, r)
		}
	}
	return string(out)
}
