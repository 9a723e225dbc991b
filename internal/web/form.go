package web

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// maxFormBytes bounds a page's form post.
const maxFormBytes = 64 << 10

// formError is a form refused as a whole before any field is looked at.
type formError struct {
	Field   string
	TooLong bool // the field ran past maxFormBytes
	Message string
}

// readForm parses a page's form post, and is the one place its strings are
// checked (DECISIONS.md, Strings): every name and value must be valid UTF-8
// without NUL. A body over maxFormBytes is cut there; browsers send fields in
// the page's order, so the field that was cut is the one too long, and it is
// named (the password, on the sign-up page) instead of the whole form
// failing as if it had expired.
func readForm(r *http.Request) (url.Values, *formError) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		return url.Values{}, nil // no fields: the CSRF check refuses it
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxFormBytes+1))
	if err != nil {
		return url.Values{}, nil
	}
	var fe *formError
	if len(body) > maxFormBytes {
		body = body[:maxFormBytes]
		cut := bytes.LastIndexByte(body, '&')
		name, _, _ := strings.Cut(string(body[cut+1:]), "=")
		if n, err := url.QueryUnescape(name); err == nil && cleanString(n) {
			name = n
		} else {
			name = "a field"
		}
		fe = &formError{Field: name, TooLong: true, Message: fmt.Sprintf("%s is too long", name)}
		body = body[:max(cut, 0)]
	}
	f, err := url.ParseQuery(string(body))
	if err != nil && fe == nil {
		return url.Values{}, &formError{Message: "the form is not valid form encoding"}
	}
	if fe != nil {
		return f, fe
	}
	for k, vs := range f {
		if !cleanString(k) {
			return f, &formError{Field: "a field", Message: "a field name holds invalid characters"}
		}
		for _, v := range vs {
			if !cleanString(v) {
				return f, &formError{Field: k, Message: fmt.Sprintf("%s must be valid UTF-8 text without NUL characters", k)}
			}
		}
	}
	return f, nil
}

// cleanString reports whether s is valid UTF-8 without NUL.
func cleanString(s string) bool { return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 }
