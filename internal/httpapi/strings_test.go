package httpapi

import "testing"

func TestFirstBadJSONString(t *testing.T) {
	for body, want := range map[string]string{
		`{"name":"ok","scopes":["read","wr\u0000"]}`:        "scopes[1]",
		`{"name":"raw` + "\x00" + `"}`:                      "-", // a raw NUL is not JSON: the operation refuses it
		`{"name":"a\u0000b"}`:                               "name",
		`{"skill_levels":{"tennis":"exp` + "\xff" + `"}}`:   "skill_levels.tennis",
		`{"availability":[{"day":"mo"},{"day":"x\u0000"}]}`: "availability[1].day",
		`{"a":[[1,2],{"b":[null,true,"\u0000"]}]}`:          "a[1].b[2]",
		`{"ok":1,"n` + "\xc3" + `":2}`:                      "n\uFFFD",
		`"\u0000"`:                                          "",
		`{"x":{},"y":[],"z":"` + "\xed\xa0\x80" + `"}`:      "z", // an encoded surrogate is not UTF-8
		`{"bio":"caf\u00e9 \ud83c\udfbe", "n":"\ud800"}`:    "-", // escapes decode to valid text
		`{"bio":"fine"}`:                                    "-",
		`{"bio":"unterminated` + "\x00":                     "-", // not JSON: the operation refuses it
		`{"a":"x"}` + "\xff":                                "-",
	} {
		got, bad := firstBadJSONString([]byte(body))
		if want == "-" {
			if bad {
				t.Errorf("%q refused at %q", body, got)
			}
			continue
		}
		if !bad || got != want {
			t.Errorf("%q: got %q, %v; want %q", body, got, bad, want)
		}
	}
}
