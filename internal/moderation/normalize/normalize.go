// Package normalize turns a text as sent into the form the moderation lists
// read, and keeps, for every code point of that form, where it came from in
// the original, so that findings can be reported as spans of the text as
// sent.
//
// The steps, per code point of the original: invisible and zero-width
// characters and combining marks are dropped; compatibility decomposition
// (the K of NFKC: full-width, mathematical, circled and ligature forms
// become plain letters) is applied; letters of other scripts that look like
// Latin letters are mapped to them; everything is lower-cased. Then, per
// token: digits and symbols inside words are read as letters ("k1ll",
// "@ss", "sh!t"), masked letters are filled from the vocabulary ("f*ck"),
// elongated words are shortened ("kiiiilll"), and runs of spaced-out or
// dotted letters ("k i l l", "k.i.l.l") are joined and split into words.
package normalize

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Text is a normalised text.
type Text struct {
	Base   []rune  // the normalised code points
	Pos    []int32 // Pos[i]: code-point index in the original of the code point Base[i] came from
	Len    int     // code points in the original
	Tokens []Token
}

// Token is one word or number of a Text.
type Token struct {
	Word       string // the reading lists match: lower case, leet, masks and elongation undone
	Raw        string // the normalised characters, digits and symbols intact
	Start, End int    // Base indices, half-open
	Letters    bool   // has a letter
	Handle     bool   // written as @name
	Joined     bool   // made of spaced-out or dotted letters
	Obfuscated bool   // read through leet, masks or elongation
}

// Span returns the half-open range, in code points of the original text, of
// Base[start:end].
func (t *Text) Span(start, end int) (int, int) {
	if start >= end || start >= len(t.Pos) {
		return 0, 0
	}
	return int(t.Pos[start]), int(t.Pos[end-1]) + 1
}

// TokenSpan returns the original range of tokens [i, j).
func (t *Text) TokenSpan(i, j int) (int, int) {
	return t.Span(t.Tokens[i].Start, t.Tokens[j-1].End)
}

// Normalize normalises s. v, which may be nil, is the vocabulary that
// resolves ambiguous readings.
func Normalize(s string, v *Vocab) *Text {
	t := &Text{Base: make([]rune, 0, len(s)), Pos: make([]int32, 0, len(s))}
	var buf [utf8.UTFMax]byte
	k := int32(0)
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			if r >= 'A' && r <= 'Z' {
				r += 'a' - 'A'
			} else if r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f' {
				r = ' '
			} else if r < 0x20 || r == 0x7f {
				k++
				continue
			}
			t.Base, t.Pos = append(t.Base, r), append(t.Pos, k)
		case invisible(r):
		case unicode.IsSpace(r):
			t.Base, t.Pos = append(t.Base, ' '), append(t.Pos, k)
		default:
			n := utf8.EncodeRune(buf[:], r)
			d := norm.NFKD.Properties(buf[:n]).Decomposition()
			if d == nil {
				t.add(r, k)
			} else {
				for _, c := range string(d) {
					t.add(c, k)
				}
			}
		}
		k++
	}
	t.Len = int(k)
	t.tokenize(v)
	return t
}

func (t *Text) add(c rune, k int32) {
	if unicode.In(c, unicode.Mn, unicode.Me) || invisible(c) {
		return
	}
	if unicode.IsSpace(c) {
		c = ' '
	} else {
		c = unicode.ToLower(c)
		if m, ok := lookalike[c]; ok {
			c = m
		}
	}
	switch c {
	case 'ß':
		t.Base, t.Pos = append(t.Base, 's', 's'), append(t.Pos, k, k)
		return
	case 'æ':
		t.Base, t.Pos = append(t.Base, 'a', 'e'), append(t.Pos, k, k)
		return
	case 'œ':
		t.Base, t.Pos = append(t.Base, 'o', 'e'), append(t.Pos, k, k)
		return
	case '\u2019', '\u2018', '\u02bc', '`', '\u00b4':
		c = '\''
	}
	t.Base, t.Pos = append(t.Base, c), append(t.Pos, k)
}

// invisible reports the code points that render as nothing: format
// characters (zero-width space and joiners, bidirectional controls, soft
// hyphen, tags), combining marks, variation selectors, controls, and the
// blank "filler" letters used to hide text.
func invisible(r rune) bool {
	switch {
	case r < 0xa0:
		return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r >= 0x7f && r < 0xa0
	case r == 0x034f, r == 0x115f, r == 0x1160, r == 0x3164, r == 0xffa0, r == 0x2800, r == 0x17b4, r == 0x17b5:
		return true
	case r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef:
		return true
	}
	return unicode.In(r, unicode.Cf, unicode.Mn, unicode.Me, unicode.Co, unicode.Cs)
}
