package messaging

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// cleanBody trims a message body and checks it: 1..MaxBody characters, no
// control characters but line breaks and tabs.
func cleanBody(param, s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", apperr.InvalidParam(param, "validation_failed", "%s must not be empty", param)
	}
	if err := wire.CheckText(param, s, MaxBody, true); err != nil {
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
	if err := wire.CheckText("title", s, MaxTitle, false); err != nil {
		return "", err
	}
	return s, nil
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

// Words splits text into the words full-text search indexes and looks
// for: runs of letters and digits, as SQLite's unicode61 tokenizer splits
// it.
func Words(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

// Terms splits a search text into the words full-text search looks for.
func Terms(q string) ([]string, error) {
	if !utf8.ValidString(q) || utf8.RuneCountInString(q) > MaxQuery {
		return nil, apperr.InvalidParam("q", "invalid_query", "q must be at most %d characters of text", MaxQuery)
	}
	var out []string
	for _, w := range Words(strings.ToLower(q)) {
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
