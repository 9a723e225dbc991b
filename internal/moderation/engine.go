package moderation

import (
	"fmt"
	"sort"
	"sync"

	"github.com/matchpoint-api/matchpoint/internal/moderation/lexicon"
	"github.com/matchpoint-api/matchpoint/internal/moderation/normalize"
)

// Threshold is the score at which a category is flagged.
const Threshold = 0.5

// engineRevision changes when the engine's code changes what it decides;
// the version string also carries digests of the lists and the model.
const engineRevision = "1.0"

// Engine checks texts. It is safe for concurrent use; Check does no I/O.
type Engine struct {
	lex     *lexicon.Lexicon
	clf     *classifier
	version string
}

var (
	defaultOnce   sync.Once
	defaultEngine *Engine
	defaultErr    error
)

// Default returns the engine built from the embedded lists and model,
// built once. It panics if they do not load (a build defect that the
// package's tests catch).
func Default() *Engine {
	defaultOnce.Do(func() { defaultEngine, defaultErr = New() })
	if defaultErr != nil {
		panic(defaultErr)
	}
	return defaultEngine
}

// New builds an engine from the embedded lists and model.
func New() (*Engine, error) {
	lex, err := lexicon.Load()
	if err != nil {
		return nil, fmt.Errorf("moderation: lists: %w", err)
	}
	known := map[string]bool{"minor": true, "grooming": true}
	for _, c := range Categories {
		known[string(c)] = true
	}
	for _, c := range lex.Categories {
		if !known[c] {
			return nil, fmt.Errorf("moderation: lists name an unknown category %q", c)
		}
	}
	clf, err := loadClassifier()
	if err != nil {
		return nil, fmt.Errorf("moderation: classifier: %w", err)
	}
	return &Engine{lex: lex, clf: clf, version: fmt.Sprintf("%s+lists.%s.model.%s", engineRevision, lex.Digest, clf.digest)}, nil
}

// Version identifies the engine, its lists and its model.
func (e *Engine) Version() string { return e.version }

// signal indexes: the categories, then the signals that only feed others.
const (
	sigMinor = iota + 11
	sigGrooming
	nSignals
)

func signalIndex(name string) int {
	switch name {
	case "minor":
		return sigMinor
	case "grooming":
		return sigGrooming
	}
	for i, c := range Categories {
		if string(c) == name {
			return i
		}
	}
	return -1
}

// evidence is one finding: a weight for a signal, over a span of the
// original text.
type evidence struct {
	sig        int
	w          float64
	start, end int
}

type scorer struct {
	score [nSignals]float64
	ev    []evidence
}

// add combines a finding into its signal's score as a noisy OR: two
// independent findings of 0.5 make 0.75.
func (s *scorer) add(sig int, w float64, start, end int) {
	s.score[sig] = 1 - (1-s.score[sig])*(1-w)
	if end > start {
		s.ev = append(s.ev, evidence{sig, w, start, end})
	}
}

// Check moderates text shown in ctx. It is pure and safe for concurrent use.
func (e *Engine) Check(text string, ctx Context) Result {
	t := normalize.Normalize(text, e.lex.Vocab)
	lang := detectLanguage(text, t, e.lex.Vocab)
	neutral := lang != "en"
	var s scorer
	for _, h := range e.lex.Match(t.Tokens, neutral) {
		start, end := t.TokenSpan(h.Start, h.End)
		s.add(signalIndex(h.Rule.Category), h.Rule.Weight, start, end)
	}
	detectPersonalData(t, &s)
	detectLinks(t, &s, ctx)
	detectHandles(t, &s)
	if !neutral {
		detectSpamStyle(text, t, &s)
		e.clf.apply(t, &s)
	}
	combineSignals(&s)
	return e.decide(&s, lang)
}

// combineSignals derives the categories that depend on others: a minor
// together with sexual content or grooming is sexual_minors.
func combineSignals(s *scorer) {
	minor := s.score[sigMinor]
	sexual := 1 - (1-s.score[idx(Sexual)])*(1-s.score[sigGrooming])
	if minor >= 0.5 && sexual >= 0.3 {
		w := (minor + sexual) / 2
		if w < Threshold {
			w = Threshold
		}
		s.score[idx(SexualMinors)] = 1 - (1-s.score[idx(SexualMinors)])*(1-w)
		for _, ev := range s.ev {
			if ev.sig == sigMinor || ev.sig == sigGrooming || ev.sig == idx(Sexual) {
				s.ev = append(s.ev, evidence{idx(SexualMinors), w, ev.start, ev.end})
			}
		}
	}
}

func idx(c Category) int { return signalIndex(string(c)) }

// spans merges the evidence of the flagged categories into sorted,
// non-overlapping spans per category.
func spans(s *scorer, flagged []Category) []Span {
	out := []Span{}
	for _, c := range flagged {
		i := idx(c)
		var mine []evidence
		for _, ev := range s.ev {
			if ev.sig == i {
				mine = append(mine, ev)
			}
		}
		sort.Slice(mine, func(a, b int) bool { return mine[a].start < mine[b].start })
		for _, ev := range mine {
			if n := len(out); n > 0 && out[n-1].Category == c && ev.start <= out[n-1].End {
				if ev.end > out[n-1].End {
					out[n-1].End = ev.end
				}
				continue
			}
			out = append(out, Span{Start: ev.start, End: ev.end, Category: c})
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Start < out[b].Start })
	return out
}
