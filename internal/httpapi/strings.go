package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
)

// validStrings is where the API checks every string it is sent, once, before
// any handler (DECISIONS.md, Strings): the path, query parameters and every
// string of a JSON body, names included, must be valid UTF-8 without NUL.
// Otherwise the answer is 400 invalid_string naming the field; PostgreSQL
// refuses such text (a 500), and SQLite would store it silently.
// (Idempotency-Key, the one header that is stored, is checked where it is
// read.)
func (s *server) validStrings(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !cleanString(r.URL.Path) {
			s.problems.writeErr(w, r, badString("path", "the path"))
			return
		}
		q, _ := url.ParseQuery(r.URL.RawQuery)
		for k, vs := range q {
			for _, v := range vs {
				if !cleanString(k) || !cleanString(v) {
					s.problems.writeErr(w, r, badString(safeName(k), "query parameter "+safeName(k)))
					return
				}
			}
		}
		if r.Body != nil && r.Body != http.NoBody {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				var tooBig *http.MaxBytesError
				if errors.As(err, &tooBig) {
					s.problems.writeErr(w, r, errBodyTooLarge)
					return
				}
				s.problems.writeErr(w, r, &apperr.Error{Kind: apperr.BadRequest, Code: "invalid_request", Message: "The request body could not be read."})
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if param, bad := firstBadJSONString(body); bad {
				what := "a string of the body"
				if param != "" {
					what = param
				}
				s.problems.writeErr(w, r, badString(param, what))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func badString(param, what string) *apperr.Error {
	return &apperr.Error{Kind: apperr.BadRequest, Code: "invalid_string", Param: param,
		Message: fmt.Sprintf("%s must be valid UTF-8 text without NUL characters.", what)}
}

func cleanString(s string) bool { return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 }

// safeName makes a refused name printable, to name it in the error.
func safeName(s string) string {
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", `\u0000`), "\uFFFD")
}

// jsonFrame is an object or array being walked.
type jsonFrame struct {
	array   bool
	key     string // object: the current member's name
	index   int    // array: the current element's index
	wantKey bool   // object: the next token is a name or the end
}

func jsonPath(stack []*jsonFrame) string {
	var b strings.Builder
	for _, f := range stack {
		if f.array {
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(safeName(f.key))
	}
	return b.String()
}

// firstBadJSONString walks a JSON document and returns the path (in the
// API's param form: "sports[1]", "skill_levels.tennis") of the first string
// that is not valid UTF-8 or holds NUL. encoding/json would quietly turn
// invalid bytes into U+FFFD, so each string is judged on its raw bytes. A
// body that is not JSON is left to the operation, which refuses it.
func firstBadJSONString(body []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var stack []*jsonFrame
	var prev int64
	done := func() { // a value ended
		if len(stack) == 0 {
			return
		}
		if top := stack[len(stack)-1]; top.array {
			top.index++
		} else {
			top.wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		raw := body[prev:dec.InputOffset()]
		prev = dec.InputOffset()
		bad := func(s string) bool { return !utf8.Valid(raw) || strings.IndexByte(s, 0) >= 0 }
		if n := len(stack); n > 0 && !stack[n-1].array && stack[n-1].wantKey {
			if k, ok := tok.(string); ok {
				stack[n-1].key, stack[n-1].wantKey = k, false
				if bad(k) {
					return jsonPath(stack), true
				}
				continue
			}
			stack = stack[:n-1] // '}'
			done()
			continue
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, &jsonFrame{wantKey: true})
			case '[':
				stack = append(stack, &jsonFrame{array: true})
			default: // ']'
				stack = stack[:len(stack)-1]
				done()
			}
		case string:
			if bad(t) {
				return jsonPath(stack), true
			}
			done()
		default:
			done()
		}
	}
}
