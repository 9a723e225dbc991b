package wire

import (
	"unicode"
	"unicode/utf8"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
)

// CheckText is the rule for free text people write (titles, descriptions,
// messages): valid UTF-8, at most max characters, no control characters
// (line breaks only where multiline allows them, tabs anywhere), and no
// bidirectional overrides or isolates, which make text show in another
// order than it is read and searched (a "Trojan Source" trick). A refusal
// is a 422 naming param.
func CheckText(param, s string, max int, multiline bool) error {
	if !utf8.ValidString(s) {
		return apperr.InvalidParam(param, "invalid_text", "%s must be valid UTF-8", param)
	}
	if utf8.RuneCountInString(s) > max {
		return apperr.InvalidParam(param, "too_long", "%s must be at most %d characters", param, max)
	}
	for _, r := range s {
		if r == '\n' || r == '\r' || r == '\t' {
			if !multiline && r != '\t' {
				return apperr.InvalidParam(param, "invalid_text", "%s must be a single line", param)
			}
			continue
		}
		if unicode.IsControl(r) {
			return apperr.InvalidParam(param, "invalid_text", "%s must not contain control characters", param)
		}
		if (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') {
			return apperr.InvalidParam(param, "invalid_text", "%s must not contain bidirectional override characters (U+%04X)", param, r)
		}
	}
	return nil
}
