package classify

import "github.com/matchpoint-api/matchpoint/internal/moderation/normalize"

// FNV-1a, inline: no allocation per feature.
const (
	fnvOffset = 2166136261
	fnvPrime  = 16777619
)

func mix(h uint32, b byte) uint32 { return (h ^ uint32(b)) * fnvPrime }

func mixString(h uint32, s string) uint32 {
	for i := 0; i < len(s); i++ {
		h = mix(h, s[i])
	}
	return h
}

// maxWord bounds the bytes of a word that make features: a 500-letter
// "word" costs no more than a long real one.
const maxWord = 24

// Features appends the hashed features of toks to buf: each word, each
// pair of neighbouring words, and the character 3-, 4- and 5-grams of each
// word with a space on either side. @handles count as one word, "@user",
// as in the tweets the model learnt from.
func Features(toks []normalize.Token, bits int, buf []uint32) []uint32 {
	mask := uint32(1)<<bits - 1
	prev := ""
	var pad [maxWord + 2]byte
	for _, t := range toks {
		w := t.Word
		if t.Handle {
			w = "@user"
		}
		if len(w) > maxWord {
			w = w[:maxWord]
		}
		buf = append(buf, mixString(mix(fnvOffset, 'w'), w)&mask)
		if prev != "" {
			h := mixString(mix(fnvOffset, 'b'), prev)
			buf = append(buf, mixString(mix(h, ' '), w)&mask)
		}
		prev = w
		pad[0] = ' '
		n := copy(pad[1:], w) + 2
		pad[n-1] = ' '
		for g := 3; g <= 5; g++ {
			seed := mix(fnvOffset, byte('0'+g))
			for i := 0; i+g <= n; i++ {
				h := seed
				for _, c := range pad[i : i+g] {
					h = mix(h, c)
				}
				buf = append(buf, h&mask)
			}
		}
	}
	return buf
}
