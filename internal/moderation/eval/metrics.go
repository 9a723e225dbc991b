package eval

import (
	"fmt"
	"sort"

	"github.com/matchpoint-api/matchpoint/internal/moderation"
)

// Targets are the quality bars of the engine.
var Targets = struct {
	BlockPrecision  float64
	RecallSevere    float64 // threat, self_harm, hate
	RecallOther     float64
	FalseFlagRate   float64 // at most
	ObfuscatedRatio float64 // obfuscated recall / clean recall, at least
}{0.97, 0.90, 0.80, 0.03, 0.9}

// CategoryScore is precision and recall of one category.
type CategoryScore struct {
	Category  moderation.Category `json:"category"`
	Support   int                 `json:"support"` // clean texts labelled with it
	TP        int                 `json:"tp"`
	FP        int                 `json:"fp"`
	FN        int                 `json:"fn"`
	Precision float64             `json:"precision"`
	Recall    float64             `json:"recall"`
}

// Report is the engine's score on one split.
type Report struct {
	Split            string             `json:"split"`
	Texts            int                `json:"texts"`      // clean texts
	Harmless         int                `json:"harmless"`   // clean texts without a harmful label
	Obfuscated       int                `json:"obfuscated"` // obfuscated copies
	Categories       []CategoryScore    `json:"categories"`
	Blocked          int                `json:"blocked"`
	BlockPrecision   float64            `json:"block_precision"`
	FalseFlags       int                `json:"false_flags"`
	FalseFlagRate    float64            `json:"false_flag_rate"`
	CleanRecall      float64            `json:"clean_recall"`      // harmful labels found, on the sources of the obfuscated copies
	ObfuscatedRecall float64            `json:"obfuscated_recall"` // the same labels found on the copies
	ObfuscatedRatio  float64            `json:"obfuscated_ratio"`
	ByObfuscation    map[string]float64 `json:"recall_by_obfuscation"`
	// Misses lists what went wrong, for development (never tune on held-out).
	Misses []string `json:"-"`
}

// Score runs check over items and scores it.
func Score(split string, items []Item, check func(string) moderation.Result) Report {
	r := Report{Split: split, ByObfuscation: map[string]float64{}}
	per := map[moderation.Category]*CategoryScore{}
	for _, c := range moderation.Categories {
		per[c] = &CategoryScore{Category: c}
	}
	found := map[string]map[moderation.Category]bool{} // clean id -> labels found
	var cleanHit, cleanAll, obfHit, obfAll int
	obfBy := map[string][2]int{}
	for _, it := range items {
		res := check(it.Text)
		if it.Source != "" {
			continue
		}
		r.Texts++
		found[it.ID] = map[moderation.Category]bool{}
		for _, c := range moderation.Categories {
			gold, got := it.Has(c), res.Has(c)
			s := per[c]
			switch {
			case gold && got:
				s.TP++
				found[it.ID][c] = true
			case got:
				s.FP++
				r.Misses = append(r.Misses, fmt.Sprintf("FP %-13s %s %q", c, it.ID, it.Text))
			case gold:
				s.FN++
				r.Misses = append(r.Misses, fmt.Sprintf("FN %-13s %s %q", c, it.ID, it.Text))
			}
			if gold {
				s.Support++
			}
		}
		if res.Decision == moderation.Block {
			r.Blocked++
			if it.ShouldBlock() {
				r.BlockPrecision++
			} else {
				r.Misses = append(r.Misses, fmt.Sprintf("BLOCK %s %q", it.ID, it.Text))
			}
		}
		if !it.Harmful() {
			r.Harmless++
			if res.Decision != moderation.Allow {
				r.FalseFlags++
				r.Misses = append(r.Misses, fmt.Sprintf("FALSE %s %s %q", res.Decision, it.ID, it.Text))
			}
		}
	}
	for _, it := range items {
		if it.Source == "" {
			continue
		}
		r.Obfuscated++
		res := check(it.Text)
		b := obfBy[it.Obfuscation]
		for _, c := range it.Labels {
			if c == moderation.Profanity {
				continue
			}
			cleanAll++
			if found[it.Source][c] {
				cleanHit++
			}
			obfAll++
			b[1]++
			if res.Has(c) {
				obfHit++
				b[0]++
			} else {
				r.Misses = append(r.Misses, fmt.Sprintf("OBF %-13s %s %q", c, it.ID, it.Text))
			}
		}
		obfBy[it.Obfuscation] = b
	}
	for _, c := range moderation.Categories {
		s := per[c]
		s.Precision = ratio(s.TP, s.TP+s.FP)
		s.Recall = ratio(s.TP, s.TP+s.FN)
		r.Categories = append(r.Categories, *s)
	}
	r.BlockPrecision = ratio(int(r.BlockPrecision), r.Blocked)
	r.FalseFlagRate = 1 - ratio(r.Harmless-r.FalseFlags, r.Harmless)
	r.CleanRecall = ratio(cleanHit, cleanAll)
	r.ObfuscatedRecall = ratio(obfHit, obfAll)
	r.ObfuscatedRatio = 0
	if r.CleanRecall > 0 {
		r.ObfuscatedRatio = r.ObfuscatedRecall / r.CleanRecall
	}
	for k, b := range obfBy {
		r.ByObfuscation[k] = ratio(b[0], b[1])
	}
	sort.Strings(r.Misses)
	return r
}

// ratio is a/b, and 1 when there is nothing to measure.
func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// Failures lists the targets the report misses.
func (r Report) Failures() []string {
	var out []string
	t := Targets
	if r.BlockPrecision < t.BlockPrecision {
		out = append(out, fmt.Sprintf("block precision %.3f < %.2f", r.BlockPrecision, t.BlockPrecision))
	}
	if r.FalseFlagRate > t.FalseFlagRate {
		out = append(out, fmt.Sprintf("false-flag rate %.3f > %.2f", r.FalseFlagRate, t.FalseFlagRate))
	}
	if r.ObfuscatedRatio < t.ObfuscatedRatio {
		out = append(out, fmt.Sprintf("obfuscated/clean recall %.3f < %.2f", r.ObfuscatedRatio, t.ObfuscatedRatio))
	}
	for _, s := range r.Categories {
		if want := RecallTarget(s.Category); s.Recall < want {
			out = append(out, fmt.Sprintf("%s recall %.3f < %.2f", s.Category, s.Recall, want))
		}
	}
	return out
}

// RecallTarget is the recall a category must reach.
func RecallTarget(c moderation.Category) float64 {
	switch c {
	case moderation.Threat, moderation.SelfHarm, moderation.Hate:
		return Targets.RecallSevere
	}
	return Targets.RecallOther
}
