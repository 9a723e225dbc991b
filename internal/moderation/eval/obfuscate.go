package eval

import (
	"math/rand/v2"
	"strings"
	"unicode"
)

// Obfuscations are the transforms applied to harmful texts, in order.
var Obfuscations = []string{"leet", "spaced", "dotted", "zero_width", "lookalike", "mixed"}

var (
	leetFor      = map[rune][]string{'a': {"4", "@"}, 'e': {"3"}, 'i': {"1", "!"}, 'o': {"0"}, 's': {"5", "$"}, 't': {"7"}, 'l': {"1"}, 'g': {"9"}, 'b': {"8"}}
	lookalikeFor = map[rune]string{'a': "а", 'e': "е", 'o': "о", 'p': "р", 'c': "с", 'x': "х", 'y': "у", 'i': "і", 's': "ѕ", 'h': "һ", 'j': "ј", 'k': "κ", 'n': "п", 'u': "υ", 'v': "ν", 't': "τ"}
	zeroWidth    = []string{"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"}
	dots         = []string{".", "-", "_", "*", "."}
)

// Obfuscate applies transform to text, deterministically for a seed: each
// purely alphabetic word of three letters or more is transformed with
// probability 0.6, and at least one is.
func Obfuscate(text, transform string, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	words := strings.Split(text, " ")
	var cand []int
	for i, w := range words {
		if letters(w) >= 3 && alphabetic(w) {
			cand = append(cand, i)
		}
	}
	if len(cand) == 0 {
		return text
	}
	chosen := map[int]bool{}
	for _, i := range cand {
		if rng.Float64() < 0.6 {
			chosen[i] = true
		}
	}
	if len(chosen) == 0 {
		chosen[cand[rng.IntN(len(cand))]] = true
	}
	for i := range words {
		if !chosen[i] {
			continue
		}
		t := transform
		if t == "mixed" {
			t = []string{"leet", "zero_width", "lookalike", "elongate"}[rng.IntN(4)]
		}
		words[i] = apply(words[i], t, rng)
	}
	return strings.Join(words, " ")
}

func letters(w string) int {
	n := 0
	for _, r := range w {
		if unicode.IsLetter(r) {
			n++
		}
	}
	return n
}

// alphabetic: letters, with at most an apostrophe inside and punctuation at
// the end ("don't", "you,").
func alphabetic(w string) bool {
	core := strings.TrimRight(w, ".,!?;:")
	for _, r := range core {
		if !unicode.IsLetter(r) && r != '\'' {
			return false
		}
	}
	return core != ""
}

func apply(w, t string, rng *rand.Rand) string {
	core := strings.TrimRight(w, ".,!?;:")
	tail := w[len(core):]
	rs := []rune(core)
	var b strings.Builder
	switch t {
	case "leet":
		changed := false
		for i, r := range rs {
			lr := unicode.ToLower(r)
			if subs, ok := leetFor[lr]; ok && (rng.Float64() < 0.6 || (!changed && i == len(rs)-1)) {
				b.WriteString(subs[rng.IntN(len(subs))])
				changed = true
				continue
			}
			b.WriteRune(r)
		}
	case "spaced", "dotted":
		sep := " "
		if t == "dotted" {
			sep = dots[rng.IntN(len(dots))]
		}
		for i, r := range rs {
			if i > 0 {
				b.WriteString(sep)
			}
			b.WriteRune(r)
		}
	case "zero_width":
		for i, r := range rs {
			b.WriteRune(r)
			if i < len(rs)-1 && rng.Float64() < 0.5 {
				b.WriteString(zeroWidth[rng.IntN(len(zeroWidth))])
			}
		}
	case "lookalike":
		for _, r := range rs {
			if s, ok := lookalikeFor[r]; ok && rng.Float64() < 0.7 {
				b.WriteString(s)
				continue
			}
			b.WriteRune(r)
		}
	case "elongate":
		done := false
		for _, r := range rs {
			b.WriteRune(r)
			if !done && strings.ContainsRune("aeiouy", unicode.ToLower(r)) {
				b.WriteString(strings.Repeat(string(r), 2+rng.IntN(4)))
				done = true
			}
		}
	default:
		b.WriteString(core)
	}
	return b.String() + tail
}
