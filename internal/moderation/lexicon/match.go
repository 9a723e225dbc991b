package lexicon

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/matchpoint-api/matchpoint/internal/moderation/normalize"
)

// Hit is one rule that matched tokens [Start, End).
type Hit struct {
	Rule       *Rule
	Start, End int
}

// Match runs the allowances, then the rules, over toks. With neutral set,
// only the rules marked "any" (language-neutral) run.
func (l *Lexicon) Match(toks []normalize.Token, neutral bool) []Hit {
	m := matcher{l: l, toks: toks}
	for i, t := range toks {
		for _, ri := range l.allowIndex[t.Word] {
			r := l.allows[ri]
			if end := m.try(r, i, 0); end > i {
				if m.mask == nil {
					m.mask = make([]uint32, len(toks))
				}
				for k := i; k < end; k++ {
					m.mask[k] |= r.Mask
				}
			}
		}
	}
	var hits []Hit
	run := func(ri, i int) {
		r := l.rules[ri]
		if neutral && !r.Any {
			return
		}
		if end := m.try(r, i, r.bit); end > i {
			hits = append(hits, Hit{Rule: r, Start: i, End: end})
		}
	}
	for i, t := range toks {
		for _, ri := range l.index[t.Word] {
			run(ri, i)
		}
		if t.Letters {
			continue // every rule in anyStart starts with a number
		}
		for _, ri := range l.anyStart {
			run(ri, i)
		}
	}
	return hits
}

type matcher struct {
	l        *Lexicon
	toks     []normalize.Token
	mask     []uint32
	contains map[string]bool
}

// try matches r starting at token i; the end index, or -1.
func (m *matcher) try(r *Rule, i int, bit uint32) int {
	if m.masked(i, bit) {
		return -1
	}
	end := m.match(r.elems, 0, i, bit)
	if end < 0 {
		return -1
	}
	if r.ifSet != "" && !m.has(r.ifSet) || r.unless != "" && m.has(r.unless) {
		return -1
	}
	return end
}

func (m *matcher) masked(i int, bit uint32) bool {
	return bit != 0 && m.mask != nil && m.mask[i]&bit != 0
}

func (m *matcher) match(es []elem, ei, ti int, bit uint32) int {
	if ei == len(es) {
		return ti
	}
	e := &es[ei]
	n := len(m.toks)
	if e.kind == kGap {
		for g := 0; g <= e.gap && ti+g <= n; g++ {
			if end := m.match(es, ei+1, ti+g, bit); end >= 0 {
				return end
			}
		}
		return -1
	}
	if ti < n && !m.masked(ti, bit) {
		t := &m.toks[ti]
		switch e.kind {
		case kWords:
			for _, rest := range e.first[t.Word] {
				if k := m.phrase(rest, ti+1, bit); k >= 0 {
					if end := m.match(es, ei+1, k, bit); end >= 0 {
						return end
					}
				}
			}
		case kNum:
			if !t.Letters && strings.ContainsAny(t.Raw, "0123456789") {
				if end := m.match(es, ei+1, ti+1, bit); end >= 0 {
					return end
				}
			}
		case kAny:
			if end := m.match(es, ei+1, ti+1, bit); end >= 0 {
				return end
			}
		case kMinor:
			if MinorAge(t.Raw) {
				if end := m.match(es, ei+1, ti+1, bit); end >= 0 {
					return end
				}
			}
		}
	}
	if e.opt {
		return m.match(es, ei+1, ti, bit)
	}
	return -1
}

// phrase matches the remaining words of a phrase from token ti; the index
// after it, or -1.
func (m *matcher) phrase(rest []string, ti int, bit uint32) int {
	for _, w := range rest {
		if ti >= len(m.toks) || m.toks[ti].Word != w || m.masked(ti, bit) {
			return -1
		}
		ti++
	}
	return ti
}

// has reports whether the text contains a phrase of the set.
func (m *matcher) has(set string) bool {
	if v, ok := m.contains[set]; ok {
		return v
	}
	found := false
	for _, p := range m.l.cond[set] {
		for i := range m.toks {
			if m.toks[i].Word == p[0] && m.phrase(p[1:], i+1, 0) >= 0 {
				found = true
				break
			}
		}
		if found {
			break
		}
	}
	if m.contains == nil {
		m.contains = map[string]bool{}
	}
	m.contains[set] = found
	return found
}

// MinorAge reports whether a number token states an age under 18 ("14",
// "14yo", "14yrs", "u14" is a team and is not an age).
func MinorAge(raw string) bool {
	i := 0
	for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
		i++
	}
	if i == 0 || i > 2 {
		return false
	}
	switch raw[i:] {
	case "", "yo", "y", "yr", "yrs", "yoa", "years":
	default:
		return false
	}
	n := 0
	for _, c := range raw[:i] {
		n = n*10 + int(c-'0')
	}
	return n >= 5 && n <= 17
}

func digest(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:4])
}
