package moderation

import (
	"os"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/moderation/normalize"
)

// TestExplain prints how the engine reads MODERATION_EXPLAIN (a
// development aid; it checks nothing else).
func TestExplain(t *testing.T) {
	text := os.Getenv("MODERATION_EXPLAIN")
	if text == "" {
		t.Skip("set MODERATION_EXPLAIN to a text")
	}
	e := Default()
	nt := normalize.Normalize(text, e.lex.Vocab)
	for _, tok := range nt.Tokens {
		t.Logf("token %q raw %q", tok.Word, tok.Raw)
	}
	t.Logf("language %s", detectLanguage(nt))
	for _, h := range e.lex.Match(nt.Tokens, false) {
		t.Logf("hit %s %.2f %s tokens %d-%d", h.Rule.Category, h.Rule.Weight, h.Rule.Source, h.Start, h.End)
	}
	t.Logf("%+v", e.Check(text, ContextMessage))
}
