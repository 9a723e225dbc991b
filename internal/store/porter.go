package store

import "strings"

// porterStem is the Porter (1980) stemmer as SQLite's full-text tokenizer
// "porter" applies it: to lower-case ASCII words of 3 to 64 bytes, others
// unchanged. Search snippets use it to mark the words of a message that a
// search term matched ("played" for "play"), as the index itself stems
// them; the index, not this, decides what matches.
func porterStem(w string) string {
	if len(w) < 3 || len(w) > 64 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return w
		}
	}
	p := porter{b: []byte(w)}
	p.k = len(p.b) - 1
	p.step1ab()
	if p.k > 0 {
		p.step1c()
		p.step2()
		p.step3()
		p.step4()
		p.step5()
	}
	return string(p.b[:p.k+1])
}

// porter holds the word being stemmed: b[0..k] is the current word, j
// the end of the stem that a matched suffix leaves.
type porter struct {
	b    []byte
	k, j int
}

// cons reports whether b[i] is a consonant ('y' is one at the start or
// after a vowel).
func (p *porter) cons(i int) bool {
	switch p.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !p.cons(i-1)
	}
	return true
}

// m counts the vowel-consonant sequences of b[0..j].
func (p *porter) m() int {
	n, i := 0, 0
	for ; i <= p.j && p.cons(i); i++ {
	}
	for {
		for ; i <= p.j && !p.cons(i); i++ {
		}
		if i > p.j {
			return n
		}
		for ; i <= p.j && p.cons(i); i++ {
		}
		n++
		if i > p.j {
			return n
		}
	}
}

func (p *porter) vowelInStem() bool {
	for i := 0; i <= p.j; i++ {
		if !p.cons(i) {
			return true
		}
	}
	return false
}

func (p *porter) doubleC(i int) bool {
	return i >= 1 && p.b[i] == p.b[i-1] && p.cons(i)
}

// cvc: b[i-2..i] is consonant, vowel, consonant, the last not w, x or y.
func (p *porter) cvc(i int) bool {
	if i < 2 || !p.cons(i) || p.cons(i-1) || !p.cons(i-2) {
		return false
	}
	switch p.b[i] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

// ends reports whether b[0..k] ends with s, and sets j before it.
func (p *porter) ends(s string) bool {
	n := len(s)
	if n > p.k+1 || string(p.b[p.k-n+1:p.k+1]) != s {
		return false
	}
	p.j = p.k - n
	return true
}

// setTo replaces b[j+1..k] with s.
func (p *porter) setTo(s string) {
	p.b = append(p.b[:p.j+1], s...)
	p.k = p.j + len(s)
}

func (p *porter) r(s string) {
	if p.m() > 0 {
		p.setTo(s)
	}
}

func (p *porter) step1ab() {
	if p.b[p.k] == 's' {
		switch {
		case p.ends("sses"):
			p.k -= 2
		case p.ends("ies"):
			p.setTo("i")
		case p.k >= 1 && p.b[p.k-1] != 's':
			p.k--
		}
	}
	if p.ends("eed") {
		if p.m() > 0 {
			p.k--
		}
		return
	}
	if (p.ends("ed") || p.ends("ing")) && p.vowelInStem() {
		p.k = p.j
		switch {
		case p.ends("at"):
			p.setTo("ate")
		case p.ends("bl"):
			p.setTo("ble")
		case p.ends("iz"):
			p.setTo("ize")
		case p.doubleC(p.k):
			switch p.b[p.k] {
			case 'l', 's', 'z':
			default:
				p.k--
			}
		default:
			p.j = p.k
			if p.m() == 1 && p.cvc(p.k) {
				p.setTo("e")
			}
		}
	}
}

func (p *porter) step1c() {
	if p.ends("y") && p.vowelInStem() {
		p.b[p.k] = 'i'
	}
}

// step2 and step3 map double suffixes to single ones when the stem has
// m > 0.
var step2Suffixes = [][2]string{
	{"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"}, {"izer", "ize"},
	{"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"}, {"ousli", "ous"},
	{"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"}, {"alism", "al"}, {"iveness", "ive"},
	{"fulness", "ful"}, {"ousness", "ous"}, {"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"},
	{"logi", "log"},
}

var step3Suffixes = [][2]string{
	{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"}, {"ical", "ic"}, {"ful", ""}, {"ness", ""},
}

func (p *porter) replaceFirst(table [][2]string) {
	for _, s := range table {
		if p.ends(s[0]) {
			p.r(s[1])
			return
		}
	}
}

func (p *porter) step2() {
	if p.k >= 1 {
		p.replaceFirst(step2Suffixes)
	}
}

func (p *porter) step3() { p.replaceFirst(step3Suffixes) }

// step4 takes off -ant, -ence and the like when the stem has m > 1.
var step4Suffixes = []string{
	"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
	"ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
}

func (p *porter) step4() {
	if p.k < 1 {
		return
	}
	for _, s := range step4Suffixes {
		if !p.ends(s) {
			continue
		}
		if s == "ion" && (p.j < 0 || !strings.ContainsRune("st", rune(p.b[p.j]))) {
			return
		}
		if p.m() > 1 {
			p.k = p.j
		}
		return
	}
}

// step5 removes a final -e when m > 1 (or m = 1 and not *o), and -ll
// becomes -l when m > 1.
func (p *porter) step5() {
	p.j = p.k
	if p.b[p.k] == 'e' {
		a := p.m()
		if a > 1 || (a == 1 && !p.cvc(p.k-1)) {
			p.k--
		}
	}
	if p.b[p.k] == 'l' && p.doubleC(p.k) && p.m() > 1 {
		p.k--
	}
}
