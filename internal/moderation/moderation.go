// Package moderation is Matchpoint's offline content moderation engine: one
// function, Engine.Check, that every place showing user text calls (the
// check endpoint, messages, profiles, events). It runs inside the service on
// what ships in the repository and never calls out.
//
// Layers, in order: a normaliser (package normalize: NFKC-style
// compatibility folding, invisible characters removed, look-alike letters
// mapped, leetspeak, elongation, spaced-out and dotted letters, with a map
// back to the original code points); curated word lists and phrase rules per
// category with allow-lists for sports talk (package lexicon); detectors
// written in code for personal data, links and handles; a small logistic
// regression over hashed word and character n-grams (package classify,
// trained by `go generate` from the public data in publicdata); and the
// decision rules of this file's Decide.
//
// Languages: English is complete. Text detected as another language gets
// the language-neutral layers only (personal data, links, handles and
// off-platform apps, scams by pattern) and Result.Language says what was
// detected; threats, hate, harassment, sexual content and self-harm in
// other languages are not detected yet.
package moderation

// Category is one of the fixed moderation categories.
type Category string

// The categories, fixed by the API.
const (
	Harassment   Category = "harassment"
	Hate         Category = "hate"
	Threat       Category = "threat"
	SelfHarm     Category = "self_harm"
	Sexual       Category = "sexual"
	SexualMinors Category = "sexual_minors"
	PersonalData Category = "personal_data"
	OffPlatform  Category = "off_platform"
	Scam         Category = "scam"
	Spam         Category = "spam"
	Profanity    Category = "profanity"
)

// Categories lists every category in the API's order.
var Categories = []Category{Harassment, Hate, Threat, SelfHarm, Sexual, SexualMinors, PersonalData, OffPlatform, Scam, Spam, Profanity}

// Decision is what a caller does with a text.
type Decision string

// Decisions, from the mildest.
const (
	Allow  Decision = "allow"  // deliver or save
	Warn   Decision = "warn"   // deliver, marked; the sender is nudged
	Review Decision = "review" // hold for a moderator (self-harm: deliver and queue a case)
	Block  Decision = "block"  // refuse
)

func (d Decision) rank() int {
	switch d {
	case Warn:
		return 1
	case Review:
		return 2
	case Block:
		return 3
	}
	return 0
}

// Context says where a text will appear.
type Context string

// Contexts.
const (
	ContextMessage Context = "message"
	ContextProfile Context = "profile"
	ContextEvent   Context = "event"
)

// Valid reports whether c is a known context ("" counts as message).
func (c Context) Valid() bool {
	return c == "" || c == ContextMessage || c == ContextProfile || c == ContextEvent
}

// Result is the engine's answer, in the shape the API shows wherever a
// decision is shown.
type Result struct {
	Decision   Decision             `json:"decision"`
	Categories map[Category]float64 `json:"categories"` // every category, score 0..1
	Flagged    []Category           `json:"flagged"`    // categories at or above the threshold, in API order
	Spans      []Span               `json:"spans"`
	Reason     string               `json:"reason"`
	Language   string               `json:"language"`          // ISO 639-1 code, or "und"
	Support    *Support             `json:"support,omitempty"` // when self_harm is flagged
	// EngineVersion identifies the engine, lists and model that decided;
	// callers record it with every decision. Not part of the API answer.
	EngineVersion string `json:"-"`
}

// Span is a stretch of the text as sent that supports a flagged category:
// code points, half-open.
type Span struct {
	Start    int      `json:"start"`
	End      int      `json:"end"`
	Category Category `json:"category"`
}

// Support is shown with a self-harm decision.
type Support struct {
	Message   string     `json:"message"`
	Resources []Resource `json:"resources"`
}

// Resource is a place to find help.
type Resource struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// Has reports whether c is flagged.
func (r Result) Has(c Category) bool {
	for _, f := range r.Flagged {
		if f == c {
			return true
		}
	}
	return false
}
