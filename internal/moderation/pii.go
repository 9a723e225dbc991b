package moderation

import (
	"strings"
	"unicode"

	"github.com/matchpoint-api/matchpoint/internal/moderation/normalize"
)

// Personal data found in code: phone numbers as people write them (with
// spaces, dots, dashes, brackets, a country code, or spelled out in
// words), e-mail addresses, payment card numbers, and street addresses.

func detectPersonalData(t *normalize.Text, s *scorer) {
	pd := idx(PersonalData)
	b := t.Base
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '@':
			if start, end, ok := email(b, i); ok {
				st, en := t.Span(start, end)
				s.add(pd, 0.9, st, en)
				i = end
			}
		case isDigit(b[i]) || (b[i] == '+' || b[i] == '(') && i+1 < len(b) && isDigit(b[i+1]):
			if i > 0 && (unicode.IsLetter(b[i-1]) || isDigit(b[i-1])) {
				continue
			}
			end, digits, groups := numberRun(b, i)
			st, en := t.Span(i, end)
			switch {
			case digits >= 13 && digits <= 19 && luhn(b[i:end]):
				s.add(pd, 0.9, st, en)
			case digits >= 9 && digits <= 15 && groups <= 6:
				s.add(pd, 0.9, st, en)
			case digits >= 7 && digits <= 8 && phoneContext(t, i):
				s.add(pd, 0.8, st, en)
			}
			i = end
		}
	}
	spelledNumbers(t, s)
	streetAddresses(t, s)
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// numberRun reads digits separated by single spaces, dots, dashes or
// brackets ("(555) 123-4567"). A slash or a colon ends it: dates, times
// and scores ("6-4 6-3" has too few digits) are not phone numbers.
func numberRun(b []rune, i int) (end, digits, groups int) {
	j := i
	if b[j] == '+' || b[j] == '(' {
		j++
	}
	end = j
	inGroup := false
	for j < len(b) {
		switch {
		case isDigit(b[j]):
			digits++
			if !inGroup {
				groups++
				inGroup = true
			}
			j++
			end = j
		case strings.ContainsRune(" .-()", b[j]) && j+1 < len(b):
			inGroup = false
			k := j + 1
			if b[j] == ')' && b[k] == ' ' && k+1 < len(b) {
				k++
			}
			if !isDigit(b[k]) && b[k] != '(' {
				return end, digits, groups
			}
			j = k
		default:
			return end, digits, groups
		}
	}
	return end, digits, groups
}

func luhn(rs []rune) bool {
	sum, n := 0, 0
	for k := len(rs) - 1; k >= 0; k-- {
		if !isDigit(rs[k]) {
			continue
		}
		d := int(rs[k] - '0')
		if n%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		n++
	}
	return n > 0 && sum%10 == 0
}

var phoneWords = map[string]bool{"call": true, "text": true, "number": true, "phone": true, "cell": true, "mobile": true,
	"ring": true, "whatsapp": true, "tel": true, "txt": true, "numero": true, "nummer": true, "contact": true, "reach": true}

// phoneContext reports whether one of the three words before Base[i] is
// about phoning.
func phoneContext(t *normalize.Text, i int) bool {
	k := 0
	for k < len(t.Tokens) && t.Tokens[k].Start < i {
		k++
	}
	for j := k - 1; j >= 0 && j >= k-3; j-- {
		if phoneWords[t.Tokens[j].Word] {
			return true
		}
	}
	return false
}

// email finds local@domain.tld around the '@' at i.
func email(b []rune, at int) (start, end int, ok bool) {
	local := func(r rune) bool {
		return r < 0x80 && (unicode.IsLetter(r) || isDigit(r) || strings.ContainsRune("._%+-", r))
	}
	start = at
	for start > 0 && local(b[start-1]) {
		start--
	}
	if start == at {
		return 0, 0, false
	}
	end = at + 1
	dots, lastDot := 0, -1
	for end < len(b) && b[end] < 0x80 && (unicode.IsLetter(b[end]) || isDigit(b[end]) || b[end] == '-' || b[end] == '.') {
		if b[end] == '.' {
			dots++
			lastDot = end
		}
		end++
	}
	for end > at+1 && b[end-1] == '.' {
		end--
		dots--
		lastDot = -1
		for k := end - 1; k > at; k-- {
			if b[k] == '.' {
				lastDot = k
				break
			}
		}
	}
	if dots < 1 || lastDot < 0 || end-lastDot-1 < 2 {
		return 0, 0, false
	}
	return start, end, true
}

var numberWords = map[string]string{"zero": "0", "oh": "0", "o": "0", "nought": "0", "one": "1", "two": "2", "three": "3",
	"four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9", "hundred": "00", "thousand": "000",
	"double": "", "triple": ""}

// spelledNumbers finds phone numbers written in words, with digits mixed
// in: "oh seven nine one one, one two three...".
func spelledNumbers(t *normalize.Text, s *scorer) {
	toks := t.Tokens
	for i := 0; i < len(toks); {
		digits, j, words, repeat := 0, i, 0, 1
		for j < len(toks) {
			w := toks[j].Word
			if d, ok := numberWords[w]; ok && !(j == i && (w == "o" || w == "oh" || w == "hundred" || w == "thousand")) {
				switch w {
				case "double":
					repeat = 2
				case "triple":
					repeat = 3
				default:
					digits += len(d) * repeat
					if w != "hundred" && w != "thousand" {
						digits += 0
					}
					repeat = 1
				}
				words++
				j++
				continue
			}
			if !toks[j].Letters && allDigits(toks[j].Raw) && j > i {
				digits += len(toks[j].Raw)
				j++
				continue
			}
			break
		}
		if words >= 3 && (digits >= 9 || digits >= 7 && phoneContext(t, toks[i].Start)) {
			st, en := t.TokenSpan(i, j)
			s.add(idx(PersonalData), 0.85, st, en)
		}
		if j > i {
			i = j
		} else {
			i++
		}
	}
}

func allDigits(s string) bool {
	for _, r := range s {
		if !isDigit(r) {
			return false
		}
	}
	return s != ""
}

var streetSuffix = map[string]bool{"street": true, "st": true, "road": true, "rd": true, "avenue": true, "ave": true,
	"lane": true, "ln": true, "drive": true, "dr": true, "boulevard": true, "blvd": true, "way": true, "close": true,
	"place": true, "pl": true, "terrace": true, "crescent": true, "square": true, "grove": true, "gardens": true,
	"mews": true, "row": true, "parade": true, "court": true, "ct": true, "hill": true, "walk": true}

var streetPrefix = map[string]bool{"rue": true, "calle": true, "via": true, "avenida": true, "rua": true, "piazza": true, "viale": true, "plaza": true}

var notStreetName = map[string]bool{"on": true, "at": true, "the": true, "in": true, "for": true, "pm": true, "am": true,
	"min": true, "mins": true, "minutes": true, "sets": true, "games": true, "of": true, "vs": true, "a": true, "to": true,
	"and": true, "or": true, "tennis": true, "indoor": true, "outdoor": true, "clay": true, "grass": true, "hard": true,
	"players": true, "people": true, "points": true, "times": true, "courts": true, "more": true, "per": true, "each": true}

var venueWords = map[string]bool{"venue": true, "club": true, "centre": true, "center": true, "stadium": true, "pitch": true,
	"tournament": true, "hall": true, "gym": true, "arena": true, "station": true, "leisure": true, "sports": true, "ground": true}

// streetAddresses finds "12 Maple Avenue" and "9 rue de la Paix". An
// address is personal data when the text says it is someone's home; a
// club's address is not.
func streetAddresses(t *normalize.Text, s *scorer) {
	toks := t.Tokens
	personal, venue := false, false
	for i, tok := range toks {
		switch tok.Word {
		case "live", "address", "home", "flat", "apartment", "apt", "house", "place", "drop", "ring", "stay", "staying",
			"habite", "jhabite", "adresse", "vivo", "direccion", "wohne", "adresse:", "abito", "indirizzo", "moro", "endereco", "domicile":
			personal = true
		case "im", "find":
			if i+1 < len(toks) && (toks[i+1].Word == "at" || toks[i+1].Word == "me") {
				personal = true
			}
		}
		if venueWords[tok.Word] {
			venue = true
		}
	}
	for i := 0; i < len(toks); i++ {
		if !houseNumber(toks[i].Raw) {
			continue
		}
		end := -1
		if i+2 < len(toks) && streetPrefix[toks[i+1].Word] && toks[i+2].Letters {
			end = i + 3
		} else {
			for k := i + 1; k < len(toks) && k <= i+4; k++ {
				w := toks[k].Word
				if !toks[k].Letters || notStreetName[w] {
					break
				}
				if streetSuffix[w] && k > i+1 {
					end = k + 1
					break
				}
			}
		}
		if end < 0 {
			continue
		}
		w := 0.4
		if personal {
			w = 0.85
		} else if venue {
			w = 0.15
		}
		st, en := t.TokenSpan(i, end)
		s.add(idx(PersonalData), w, st, en)
	}
}

// houseNumber: 1 to 4 digits, perhaps a letter ("221b").
func houseNumber(raw string) bool {
	n := 0
	for n < len(raw) && isDigit(rune(raw[n])) {
		n++
	}
	if n == 0 || n > 4 {
		return false
	}
	rest := raw[n:]
	return rest == "" || len(rest) == 1 && rest[0] >= 'a' && rest[0] <= 'z'
}
