package classify_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/moderation/classify"
	"github.com/matchpoint-api/matchpoint/internal/moderation/lexicon"
	"github.com/matchpoint-api/matchpoint/internal/moderation/normalize"
	"github.com/matchpoint-api/matchpoint/internal/moderation/publicdata"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	m, err := classify.Default()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	m2, err := classify.Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	toks := normalize.Normalize("WINNER! claim your free prize now, call 09061701461", nil).Tokens
	if a, b := m.Score(toks), m2.Score(toks); a != b {
		t.Fatalf("scores differ after a round trip: %+v %+v", a, b)
	}
	if _, err := classify.Decode([]byte("not gzip")); err == nil {
		t.Fatal("decoded garbage")
	}
}

func TestFeaturesAreDeterministicAndBounded(t *testing.T) {
	toks := normalize.Normalize("see you @sam at the court "+string(bytes.Repeat([]byte("a"), 500)), nil).Tokens
	a := classify.Features(toks, 18, nil)
	b := classify.Features(toks, 18, nil)
	if len(a) != len(b) || len(a) == 0 {
		t.Fatal("features differ between runs")
	}
	for i := range a {
		if a[i] != b[i] || a[i] >= 1<<18 {
			t.Fatalf("feature %d: %d vs %d", i, a[i], b[i])
		}
	}
	if len(a) > 200 {
		t.Fatalf("%d features: a long word must not make hundreds", len(a))
	}
}

// The committed model must stay useful on the public sets' held-out rows
// (the bench command prints the figures beside the published ones).
func TestModelOnHeldOutPublicRows(t *testing.T) {
	m, err := classify.Default()
	if err != nil {
		t.Fatal(err)
	}
	lex, err := lexicon.Load()
	if err != nil {
		t.Fatal(err)
	}
	sms, err := publicdata.SMS()
	if err != nil {
		t.Fatal(err)
	}
	dav, err := publicdata.Davidson()
	if err != nil {
		t.Fatal(err)
	}
	_, sHeld := classify.Split(heldOnly(sms), lex, m.Bits)
	_, dHeld := classify.Split(heldOnly(dav), lex, m.Bits)
	r := m.EvaluatePublic(dHeld, sHeld)
	if r.SMS.Accuracy < 0.95 || r.SMS.SpamCaught < 0.85 {
		t.Errorf("SMS held-out: %+v", r.SMS)
	}
	if r.Davidson.Weighted.F1 < 0.80 {
		t.Errorf("Davidson held-out: %+v", r.Davidson.Weighted)
	}
}

// heldOnly keeps the held-out rows: only they are scored.
func heldOnly(docs []publicdata.Doc) []publicdata.Doc {
	var out []publicdata.Doc
	for _, d := range docs {
		if publicdata.HeldOut(d.Text) {
			out = append(out, d)
		}
	}
	return out
}

// The weights depend on how the normaliser reads words, which depends on
// the lists' vocabulary: they must be regenerated when the lists change.
func TestModelWasTrainedWithTheCurrentLists(t *testing.T) {
	lex, err := lexicon.Load()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("MODEL.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "lists of digest "+lex.Digest) {
		t.Fatalf("MODEL.md does not name the current lists (%s): run go generate ./internal/moderation/classify", lex.Digest)
	}
	m, err := classify.Default()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "digest "+m.Digest) {
		t.Fatalf("MODEL.md does not describe the committed weights (%s)", m.Digest)
	}
}
