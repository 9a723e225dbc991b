package moderation

import (
	"math"
	"strings"
)

// ScamBlock is the scam score from which a scam is blocked rather than
// held for review.
const ScamBlock = 0.85

// SevereHarassment is the harassment score (telling someone to kill
// themselves, wishing them dead) that holds a text for review instead of
// only warning.
const SevereHarassment = 0.95

// categoryDecision is the decision one flagged category asks for.
func categoryDecision(c Category, score float64) Decision {
	switch c {
	case Threat, Hate, SexualMinors:
		return Block
	case Scam:
		if score >= ScamBlock {
			return Block
		}
		return Review
	case SelfHarm:
		return Review
	case Harassment:
		if score >= SevereHarassment {
			return Review
		}
		return Warn
	case Sexual, Spam, PersonalData, OffPlatform:
		return Warn
	}
	return Allow // profanity not aimed at anyone
}

var reasons = map[Category]string{
	Threat:       "threatens violence",
	Hate:         "attacks people for who they are",
	SexualMinors: "sexualises minors",
	Scam:         "looks like a scam",
	SelfHarm:     "suggests the writer may be at risk of harming themselves",
	Harassment:   "insults or harasses someone",
	Sexual:       "contains sexual content or solicitation",
	Spam:         "looks like spam or promotion",
	PersonalData: "shares personal contact details",
	OffPlatform:  "asks to move the conversation to another app",
	Profanity:    "contains profanity that is not aimed at anyone",
}

// SupportMessage and SupportResources are shown with every self-harm
// decision.
var (
	SupportMessage   = "It sounds like you are going through a lot. You don't have to face it alone: people at these services are ready to listen, any time."
	SupportResources = []Resource{
		{Name: "Find a Helpline (international directory of free, confidential helplines)", URL: "https://findahelpline.com"},
		{Name: "988 Suicide & Crisis Lifeline (United States: call or text 988)", URL: "https://988lifeline.org"},
		{Name: "Samaritans (United Kingdom and Ireland: call 116 123)", URL: "https://www.samaritans.org"},
	}
)

// absorbedBy lists, for a category, the more specific findings that
// include it: swearing inside an insult is part of the harassment, sexual
// content about a minor is sexual_minors, a scam's promotion is the scam.
// The absorbed category's score is still reported; it is not flagged.
var absorbedBy = map[Category][]Category{
	Profanity: {Harassment, Hate, Threat, Sexual, SexualMinors},
	Sexual:    {SexualMinors},
	Spam:      {Scam},
}

func (e *Engine) decide(s *scorer, lang string) Result {
	r := Result{Decision: Allow, Categories: make(map[Category]float64, len(Categories)), Flagged: []Category{},
		Language: lang, EngineVersion: e.version}
	var worst Category
	for i, c := range Categories {
		sc := math.Round(s.score[i]*1000) / 1000
		r.Categories[c] = sc
		if s.score[i] < Threshold || absorbed(s, c) {
			continue
		}
		r.Flagged = append(r.Flagged, c)
		d := categoryDecision(c, s.score[i])
		if worst == "" || d.rank() > r.Decision.rank() || d.rank() == r.Decision.rank() && s.score[i] > s.score[idx(worst)] {
			r.Decision, worst = d, c
		}
	}
	r.Spans = spans(s, r.Flagged)
	if r.Has(SelfHarm) {
		r.Support = &Support{Message: SupportMessage, Resources: SupportResources}
	}
	r.Reason = reason(r, worst)
	return r
}

func reason(r Result, worst Category) string {
	if len(r.Flagged) == 0 {
		return "No problem found."
	}
	var others []string
	for _, c := range r.Flagged {
		if c != worst {
			others = append(others, reasons[c])
		}
	}
	s := "The text " + reasons[worst]
	if len(others) > 0 {
		s += "; it also " + strings.Join(others, "; ")
	}
	return s + "."
}

func absorbed(s *scorer, c Category) bool {
	for _, by := range absorbedBy[c] {
		if s.score[idx(by)] >= Threshold {
			return true
		}
	}
	return false
}
