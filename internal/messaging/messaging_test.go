package messaging

import (
	"slices"
	"strings"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
)

func TestTerms(t *testing.T) {
	for _, c := range []struct {
		q    string
		want []string
		code string
	}{
		{"Tennis at TEN, tennis!", []string{"tennis", "at", "ten"}, ""},
		{`"court" OR conversation_id:*`, []string{"court", "or", "conversation", "id"}, ""},
		{"Café 3", []string{"café", "3"}, ""},
		{" ++ -- ", nil, "invalid_query"},
		{"a b c d e f g h i j k", nil, "invalid_query"},
		{strings.Repeat("x", MaxQuery+1), nil, "invalid_query"},
		{"\xff", nil, "invalid_query"},
	} {
		got, err := Terms(c.q)
		if c.code != "" {
			if e, ok := apperr.As(err); !ok || e.Code != c.code || e.Param != "q" {
				t.Errorf("Terms(%q) error %v, want %s", c.q, err, c.code)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Terms(%q) = %v, %v; want %v", c.q, got, err, c.want)
		}
	}
}

func TestCleanBody(t *testing.T) {
	for _, c := range []struct {
		in, want, code string
	}{
		{"  hi there \n", "hi there", ""},
		{"line one\nline two\ttab", "line one\nline two\ttab", ""},
		{" \n\t ", "", "validation_failed"},
		{"bell\a", "", "invalid_text"},
		{strings.Repeat("é", MaxBody), strings.Repeat("é", MaxBody), ""},
		{strings.Repeat("é", MaxBody+1), "", "too_long"},
	} {
		got, err := cleanBody("body", c.in)
		if c.code != "" {
			if e, ok := apperr.As(err); !ok || e.Code != c.code || e.Param != "body" {
				t.Errorf("cleanBody(%.20q) error %v, want %s", c.in, err, c.code)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("cleanBody(%.20q) = %.20q, %v", c.in, got, err)
		}
	}
	if _, err := cleanTitle("two\nlines"); err == nil {
		t.Error("a title with a line break was accepted")
	}
}

// TestPageOf: a page read the other way round comes back in the order asked,
// and its cursor is the last message in the direction of travel.
func TestPageOf(t *testing.T) {
	ms := func(ids ...string) []*Message {
		var out []*Message
		for _, id := range ids {
			out = append(out, &Message{ID: id})
		}
		return out
	}
	idsOf := func(p *Page) []string {
		var out []string
		for _, m := range p.Messages {
			out = append(out, m.ID)
		}
		return out
	}
	p := pageOf(ms("5", "4", "3"), 2, false)
	if !slices.Equal(idsOf(p), []string{"5", "4"}) || !p.HasMore || p.NextCursor != "4" {
		t.Fatalf("newest first: %v %v %q", idsOf(p), p.HasMore, p.NextCursor)
	}
	p = pageOf(ms("5", "4", "3"), 2, true)
	if !slices.Equal(idsOf(p), []string{"4", "5"}) || !p.HasMore || p.NextCursor != "4" {
		t.Fatalf("read backwards, shown oldest first: %v %v %q", idsOf(p), p.HasMore, p.NextCursor)
	}
	p = pageOf(ms("6", "7"), 2, false)
	if p.HasMore || p.NextCursor != "" {
		t.Fatalf("last page: %v %q", p.HasMore, p.NextCursor)
	}
}
