package users

import (
	"net/mail"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
)

// MaxEmail bounds an email address (RFC 5321's path limit).
const MaxEmail = 254

// NormalizeEmail checks an address and returns it trimmed and NFKC-normalised,
// plus the key under which uniqueness is enforced and sign-in looks it up
// (that form folded to lower case). Addresses that could pass for another
// one are refused: invisible characters, and scripts mixed within the local
// part or a domain label ("аnn" with a Cyrillic а), so that a look-alike
// cannot become a second account (DECISIONS.md, Strings).
func NormalizeEmail(email string) (addr, key string, err error) {
	email = strings.TrimSpace(email)
	if email == "" {
		return "", "", apperr.InvalidParam("email", "invalid_email", "email is required")
	}
	if !utf8.ValidString(email) || strings.IndexFunc(email, invisible) >= 0 {
		return "", "", apperr.InvalidParam("email", "invalid_email", "email must not contain invisible or control characters")
	}
	email = norm.NFKC.String(email)
	a, perr := mail.ParseAddress(email)
	at := strings.LastIndexByte(email, '@')
	if len(email) > MaxEmail || perr != nil || a.Address != email || a.Name != "" || at < 0 || !strings.Contains(email[at:], ".") {
		return "", "", apperr.InvalidParam("email", "invalid_email", "email must be a plain address like name@example.com")
	}
	parts := append([]string{email[:at]}, strings.Split(email[at+1:], ".")...)
	for _, p := range parts {
		if mixedScripts(p) {
			return "", "", apperr.InvalidParam("email", "invalid_email", "email must not mix alphabets within a part (like a Cyrillic letter among Latin ones)")
		}
	}
	return email, EmailKey(email), nil
}

// EmailKey is the uniqueness and look-up key of an address: NFKC, lower case.
// Sign-in computes it from what was typed, without the other checks.
func EmailKey(email string) string {
	return strings.ToLower(norm.NFKC.String(strings.TrimSpace(email)))
}

// invisible reports characters that show nothing or alter how their
// neighbours show: controls, format characters (zero-width space and
// joiners, bidi overrides, soft hyphen), variation selectors, other
// default-ignorable code points, and spaces.
func invisible(r rune) bool {
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point) ||
		unicode.IsSpace(r) || r == utf8.RuneError
}

// scriptsToCheck are the scripts a letter may belong to, without Common and
// Inherited (digits, punctuation, combining marks go with any script).
var scriptsToCheck = func() []*unicode.RangeTable {
	var out []*unicode.RangeTable
	for name, t := range unicode.Scripts {
		if name != "Common" && name != "Inherited" {
			out = append(out, t)
		}
	}
	return out
}()

func scriptOf(r rune) *unicode.RangeTable {
	if r < utf8.RuneSelf {
		if unicode.IsLetter(r) {
			return unicode.Latin
		}
		return nil
	}
	for _, t := range scriptsToCheck {
		if unicode.Is(t, r) {
			return t
		}
	}
	return nil
}

// mixedScripts applies the "highly restrictive" level of Unicode TS #39: one
// script, or Latin with the scripts that are written together in Japanese,
// Chinese and Korean.
func mixedScripts(s string) bool {
	seen := map[*unicode.RangeTable]bool{}
	for _, r := range s {
		if t := scriptOf(r); t != nil {
			seen[t] = true
		}
	}
	if len(seen) <= 1 {
		return false
	}
	for _, allowed := range [][]*unicode.RangeTable{
		{unicode.Latin, unicode.Han, unicode.Hiragana, unicode.Katakana},
		{unicode.Latin, unicode.Han, unicode.Bopomofo},
		{unicode.Latin, unicode.Han, unicode.Hangul},
	} {
		n := 0
		for _, t := range allowed {
			if seen[t] {
				n++
			}
		}
		if n == len(seen) {
			return false
		}
	}
	return true
}
