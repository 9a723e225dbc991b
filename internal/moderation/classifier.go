package moderation

import (
	"github.com/matchpoint-api/matchpoint/internal/moderation/classify"
	"github.com/matchpoint-api/matchpoint/internal/moderation/normalize"
)

// classifier wraps the trained model as one more signal. Alone it never
// flags a category (its contributions stay under the threshold): the
// public data it learnt from is not sports chat, so it only strengthens
// what the lists found or nearly found.
type classifier struct {
	m      *classify.Model
	digest string
}

func loadClassifier() (*classifier, error) {
	m, err := classify.Default()
	if err != nil {
		return nil, err
	}
	return &classifier{m: m, digest: m.Digest}, nil
}

var secondPerson = map[string]bool{"you": true, "u": true, "ur": true, "your": true, "youre": true, "ya": true, "yourself": true}

func (c *classifier) apply(t *normalize.Text, s *scorer) {
	if len(t.Tokens) == 0 {
		return
	}
	sc := c.m.Score(t.Tokens)
	if sc.Spam > 0.5 {
		s.add(idx(Spam), 0.45*(sc.Spam-0.5)*2, 0, 0)
	}
	aimed := false
	for _, tok := range t.Tokens {
		if secondPerson[tok.Word] {
			aimed = true
			break
		}
	}
	if tox := sc.Hate + sc.Offensive; aimed && tox > 0.7 {
		s.add(idx(Harassment), 0.4*tox, 0, 0)
	}
	if sc.Hate > 0.5 {
		s.add(idx(Hate), 0.4*sc.Hate, 0, 0)
	}
}
