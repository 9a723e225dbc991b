// Package names folds place names into the keys the gazetteer indexes, so
// that "München", "MUNCHEN" and "munchen" meet, as do "Saint-Étienne" and
// "saint etienne". The generator of the data file and the resolver at run
// time fold with this one function.
package names

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// letters that do not decompose into a base letter and a mark.
var special = map[rune]string{
	'ß': "ss", 'æ': "ae", 'œ': "oe", 'ø': "o", 'ł': "l", 'đ': "d", 'ð': "d", 'þ': "th", 'ı': "i", 'ħ': "h",
}

// Fold lower-cases s, strips accents, spells out letters like ß, turns every
// run of punctuation and spaces into one space and trims the result.
func Fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range norm.NFD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		r = unicode.ToLower(r)
		if rep, ok := special[r]; ok {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteString(rep)
			continue
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
			continue
		}
		space = true
	}
	return b.String()
}

// Latin reports whether a folded name is written in Latin letters (and digits).
func Latin(folded string) bool {
	for _, r := range folded {
		if r > unicode.MaxASCII {
			return false
		}
	}
	return true
}
