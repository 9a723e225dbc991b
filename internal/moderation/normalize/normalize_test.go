package normalize

import (
	"strings"
	"testing"
)

var vocab = NewVocab(strings.Fields("kill you i will ass shit fuck fucking the little girls all idiot as off of living point isnt ill dog baker street your"), func(w string) bool {
	return w == "ass" || w == "fuck" || w == "shit"
})

func words(t *Text) string {
	var ws []string
	for _, tok := range t.Tokens {
		ws = append(ws, tok.Word)
	}
	return strings.Join(ws, " ")
}

func TestNormalizeReadsObfuscatedWords(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "I will KILL you", "i will kill you"},
		{"full-width", "ｋｉｌｌ ｙｏｕ", "kill you"},
		{"mathematical bold", "𝐤𝐢𝐥𝐥 you", "kill you"},
		{"circled", "ⓚⓘⓛⓛ", "kill"},
		{"diacritics", "kíll yóu", "kill you"},
		{"zero-width", "k\u200bi\u200cl\u200dl y\u2060o\ufeffu", "kill you"},
		{"soft hyphen and bidi", "ki\u00adll\u202e you", "kill you"},
		{"cyrillic look-alikes", "kіll уоu", "kill you"},
		{"greek look-alikes", "κill yου", "kill you"},
		{"leet", "k1ll y0u", "kill you"},
		{"leet l for 1", "ki11", "kill"},
		{"leet mixed i and l", "k1l1 th3 1i7t13 91r15", "kill the little girls"},
		{"symbols", "@ss sh!t", "ass shit"},
		{"symbols alone", "k111 @11", "kill all"},
		{"leading !", "!'ll", "ill"},
		{"mask", "f*ck f**king", "fuck fucking"},
		{"elongation", "kiiiilllll yoooouuuu", "kill you"},
		{"elongation prefers the listed word", "asssss", "ass"},
		{"elongation of a short word", "piss oooff", "piss off"},
		{"spaced letters", "i will k i l l you", "i will kill you"},
		{"spaced words run together", "k i l l y o u", "kill you"},
		{"spaced apostrophe", "I ' l l k i l l you", "ill kill you"},
		{"dotted", "k.i.l.l y-o-u", "kill you"},
		{"dotted apostrophe", "i_'_l_l kill y.o.u.r d*o*g", "ill kill your dog"},
		{"unknown stretch in a run", "B a k e r S t r e e t", "baker street"},
		{"numbers stay numbers", "07911 123456 6-4 7:30", "07911 123456 6 4 7 30"},
		{"apostrophes dropped", "isn't", "isnt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := words(Normalize(c.in, vocab)); got != c.want {
				t.Errorf("Normalize(%q) reads %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestNormalizeKeepsOriginalOffsets(t *testing.T) {
	cases := []struct {
		name, in, word string
		start, end     int // code points of the original
	}{
		{"ascii", "hey kill you", "kill", 4, 8},
		{"emoji before", "😀😀 kill", "kill", 3, 7},
		{"zero-width inside", "a k\u200bi\u200bl\u200bl b", "kill", 2, 9},
		{"full-width", "ｈｉ ｋｉｌｌ", "kill", 3, 7},
		{"combining marks", "e\u0301 kill", "kill", 3, 7},
		{"ligature expands", "ﬁne kill", "kill", 4, 8},
		{"spaced", "ok k i l l you", "kill", 3, 10},
		{"invalid utf-8 counts as one", "\xff kill", "kill", 2, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nt := Normalize(c.in, vocab)
			for i, tok := range nt.Tokens {
				if tok.Word == c.word {
					s, e := nt.TokenSpan(i, i+1)
					if s != c.start || e != c.end {
						t.Errorf("%q in %q spans [%d,%d), want [%d,%d)", c.word, c.in, s, e, c.start, c.end)
					}
					rs := []rune(c.in)
					t.Logf("span text %q", string(rs[s:e]))
					return
				}
			}
			t.Fatalf("%q not read in %q: %q", c.word, c.in, words(nt))
		})
	}
}

func TestNormalizeLengthCountsCodePoints(t *testing.T) {
	if n := Normalize("a😀\u200bb", nil).Len; n != 4 {
		t.Fatalf("Len = %d, want 4", n)
	}
}

func TestNormalizeHandles(t *testing.T) {
	nt := Normalize("my ig is @laura_runs", vocab)
	var handle *Token
	for i := range nt.Tokens {
		if nt.Tokens[i].Handle {
			handle = &nt.Tokens[i]
		}
	}
	if handle == nil || handle.Word != "laura" {
		t.Fatalf("no @handle token in %+v", nt.Tokens)
	}
	if w := words(Normalize("@ss", vocab)); w != "ass" {
		t.Fatalf("@ss reads %q: a known word is not a handle", w)
	}
}
