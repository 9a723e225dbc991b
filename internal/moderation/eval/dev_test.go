package eval_test

import (
	"os"
	"strings"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/moderation"
	"github.com/matchpoint-api/matchpoint/internal/moderation/eval"
)

// TestDevelopmentSplitMeetsTargets is the quality gate: the engine on the
// development split must meet every target. (The held-out split is only
// reported, by `matchpoint bench moderation`.)
func TestDevelopmentSplitMeetsTargets(t *testing.T) {
	items, err := eval.Load(eval.Dev)
	if err != nil {
		t.Fatal(err)
	}
	e := moderation.Default()
	r := eval.Score(eval.Dev, items, func(s string) moderation.Result { return e.Check(s, moderation.ContextMessage) })
	if os.Getenv("MODERATION_MISSES") != "" {
		t.Log("\n" + strings.Join(r.Misses, "\n"))
	}
	for _, c := range r.Categories {
		t.Logf("%-14s support %3d  precision %.2f  recall %.2f", c.Category, c.Support, c.Precision, c.Recall)
	}
	t.Logf("block precision %.3f (%d blocked), false flags %.3f (%d of %d), obfuscated recall %.3f / clean %.3f = %.3f %v",
		r.BlockPrecision, r.Blocked, r.FalseFlagRate, r.FalseFlags, r.Harmless, r.ObfuscatedRecall, r.CleanRecall, r.ObfuscatedRatio, r.ByObfuscation)
	for _, f := range r.Failures() {
		t.Error(f)
	}
}
