package messaging

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/ids"
)

// cleanBody trims a message body and checks it: 1..MaxBody characters, no
// control characters but line breaks and tabs.
func cleanBody(param, s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", apperr.InvalidParam(param, "validation_failed", "%s must not be empty", param)
	}
	if err := checkText(param, s, MaxBody, true); err != nil {
		return "", err
	}
	return s, nil
}

// cleanTitle trims a group's title: 1..MaxTitle characters on one line.
func cleanTitle(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", apperr.InvalidParam("title", "validation_failed", "title must not be empty")
	}
	if err := checkText("title", s, MaxTitle, false); err != nil {
		return "", err
	}
	return s, nil
}

func checkText(param, s string, max int, multiline bool) error {
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
		// Bidirectional overrides and isolates make text show in another
		// order than it is read and searched (a "Trojan Source" trick).
		if (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') {
			return apperr.InvalidParam(param, "invalid_text", "%s must not contain bidirectional override characters (U+%04X)", param, r)
		}
	}
	return nil
}

// checkUserIDs refuses an empty (invalid_id) or malformed (unknown_user:
// it names nobody) user id in the list named param before anything looks
// it up.
func checkUserIDs(param string, list []string) error {
	for _, id := range list {
		if id == "" {
			return apperr.InvalidParam(param, "invalid_id", "%s holds an empty id", param)
		}
		if !ids.Valid(ids.User, id) {
			return apperr.InvalidParam(param, "unknown_user", "no user %q you can message", id)
		}
	}
	return nil
}

// Terms splits a search text into the words full-text search looks for.
func Terms(q string) ([]string, error) {
	if !utf8.ValidString(q) || utf8.RuneCountInString(q) > MaxQuery {
		return nil, apperr.InvalidParam("q", "invalid_query", "q must be at most %d characters of text", MaxQuery)
	}
	words := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	var out []string
	for _, w := range words {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return nil, apperr.InvalidParam("q", "invalid_query", "q must contain a word")
	}
	if len(out) > MaxTerms {
		return nil, apperr.InvalidParam("q", "invalid_query", "q may hold at most %d words", MaxTerms)
	}
	return out, nil
}
