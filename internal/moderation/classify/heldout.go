package classify

import (
	"github.com/matchpoint-api/matchpoint/internal/moderation/lexicon"
	"github.com/matchpoint-api/matchpoint/internal/moderation/normalize"
	"github.com/matchpoint-api/matchpoint/internal/moderation/publicdata"
)

// PublicReport is the model alone on the held-out rows of both public sets.
type PublicReport struct {
	Davidson DavidsonReport `json:"davidson"`
	SMS      SMSReport      `json:"sms"`
}

// Split loads a public data set and turns it into training and held-out
// examples, read by the same normaliser as the engine uses.
func Split(docs []publicdata.Doc, lex *lexicon.Lexicon, bits int) (train, held []Example) {
	for _, d := range docs {
		t := normalize.Normalize(d.Text, lex.Vocab)
		ex := Example{Feats: Features(t.Tokens, bits, nil), Label: d.Label}
		if publicdata.HeldOut(d.Text) {
			held = append(held, ex)
		} else {
			train = append(train, ex)
		}
	}
	return train, held
}

// Predict returns the toxicity class and spam decision for features.
func (m *Model) predict(feats []uint32) (int, bool) {
	s := m.scoreFeats(feats)
	cls := 0
	if s.Offensive > s.Hate {
		cls = 1
	}
	if s.Neither > s.Hate && s.Neither > s.Offensive {
		cls = 2
	}
	return cls, s.Spam >= 0.5
}

// EvaluatePublic scores the model on held-out examples of both sets.
func (m *Model) EvaluatePublic(davidsonHeld, smsHeld []Example) PublicReport {
	var dp, dg []int
	for _, ex := range davidsonHeld {
		c, _ := m.predict(ex.Feats)
		dp, dg = append(dp, c), append(dg, ex.Label)
	}
	var sp, sg []bool
	for _, ex := range smsHeld {
		_, s := m.predict(ex.Feats)
		sp, sg = append(sp, s), append(sg, ex.Label == 1)
	}
	return PublicReport{Davidson: EvaluateDavidson(dp, dg), SMS: EvaluateSMS(sp, sg)}
}
