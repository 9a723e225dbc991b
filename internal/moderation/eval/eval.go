// Package eval holds the labelled evaluation set written for Matchpoint
// (data/written.txt) and scores the moderation engine against it.
//
// `go generate` (gen/) turns the written texts into data/dev.jsonl and
// data/heldout.jsonl: each kind of text is split half and half, and every
// harmful text gets obfuscated copies (leetspeak, spaced-out letters, dotted
// letters, zero-width characters, look-alike letters, and a mix). Rules are
// tuned on the development part only; the held-out part is for reporting.
package eval

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"fmt"

	"github.com/matchpoint-api/matchpoint/internal/moderation"
)

//go:generate go run ./gen

//go:embed data/dev.jsonl data/heldout.jsonl
var data embed.FS

// Item is one labelled text.
type Item struct {
	ID          string                `json:"id"`
	Kind        string                `json:"kind"`
	Labels      []moderation.Category `json:"labels"`
	Text        string                `json:"text"`
	Source      string                `json:"source,omitempty"`      // obfuscated copies: the id of the clean text
	Obfuscation string                `json:"obfuscation,omitempty"` // obfuscated copies: the transform
}

// Split names.
const (
	Dev     = "dev"
	HeldOut = "heldout"
)

// Load returns the items of a split, clean texts first.
func Load(split string) ([]Item, error) {
	b, err := data.ReadFile("data/" + split + ".jsonl")
	if err != nil {
		return nil, fmt.Errorf("eval: unknown split %q", split)
	}
	var items []Item
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		var it Item
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			return nil, fmt.Errorf("eval: %s: %w", split, err)
		}
		items = append(items, it)
	}
	return items, sc.Err()
}

// Harmful reports whether an item has a label other than profanity (which
// is allowed when it is not aimed at anyone).
func (it Item) Harmful() bool {
	for _, l := range it.Labels {
		if l != moderation.Profanity {
			return true
		}
	}
	return false
}

// ShouldBlock reports whether the labels include a category whose
// decision may be block.
func (it Item) ShouldBlock() bool {
	for _, l := range it.Labels {
		switch l {
		case moderation.Threat, moderation.Hate, moderation.SexualMinors, moderation.Scam:
			return true
		}
	}
	return false
}

// Has reports whether the item is labelled c.
func (it Item) Has(c moderation.Category) bool {
	for _, l := range it.Labels {
		if l == c {
			return true
		}
	}
	return false
}
