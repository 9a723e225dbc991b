package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"sort"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/moderation"
	"github.com/matchpoint-api/matchpoint/internal/moderation/classify"
	"github.com/matchpoint-api/matchpoint/internal/moderation/eval"
	"github.com/matchpoint-api/matchpoint/internal/moderation/lexicon"
	"github.com/matchpoint-api/matchpoint/internal/moderation/publicdata"
)

// ModerationOptions choose what `bench moderation` measures.
type ModerationOptions struct {
	Duration time.Duration // per throughput round
	Rounds   int
	JSON     bool
}

// Published figures the classifier is shown beside.
var (
	// Davidson, Warmsley, Macy, Weber, ICWSM 2017, logistic regression,
	// 5-fold: overall (support-weighted) precision .91, recall .90, F1 .90;
	// hate class precision .44, recall .61.
	PublishedDavidson = struct{ Precision, Recall, F1, HatePrecision, HateRecall float64 }{0.91, 0.90, 0.90, 0.44, 0.61}
	// Almeida, Gómez Hidalgo, Yamakami, DocEng 2011, best result (linear
	// SVM): accuracy 97.64 %, spam caught 83.10 %, blocked ham 0.18 %.
	PublishedSMS = struct{ Accuracy, SpamCaught, BlockedHam float64 }{0.9764, 0.8310, 0.0018}
)

// ModerationResult is everything `bench moderation` measures.
type ModerationResult struct {
	EngineVersion string                `json:"engine_version"`
	HeldOut       eval.Report           `json:"heldout"`
	Dev           eval.Report           `json:"dev"`
	Targets       map[string]float64    `json:"targets"`
	Failures      []string              `json:"failures"` // held-out targets missed
	Classifier    classify.PublicReport `json:"classifier_public_heldout"`
	Throughput    ModerationThroughput  `json:"throughput"`
}

// ModerationThroughput is Check on one goroutine over typical chat messages.
type ModerationThroughput struct {
	GOMAXPROCS      int       `json:"gomaxprocs"`
	Messages        int       `json:"messages"` // distinct texts cycled through
	MeanRunes       float64   `json:"mean_code_points"`
	ChecksPerSecond float64   `json:"checks_per_second_per_core"` // per CPU-second of the measuring thread, median of the rounds
	MicrosPerCheck  float64   `json:"microseconds_per_check"`
	Rounds          []float64 `json:"rounds"`
	WallPerSecond   float64   `json:"checks_per_wall_second"` // median; lower than per core when the machine is busy
	CPUClock        string    `json:"cpu_clock"`              // "thread" (CPU time of the measuring thread) or "wall"
}

// The moderation bench: `matchpoint bench moderation [flags]`.
func init() {
	register(Command{Name: "moderation", Summary: "precision and recall of the moderation engine on its held-out texts, and checks/second per core",
		Flags: func(fs *flag.FlagSet) Run {
			o := ModerationOptions{}
			fs.DurationVar(&o.Duration, "duration", 2*time.Second, "length of each throughput round")
			fs.IntVar(&o.Rounds, "rounds", 3, "throughput rounds (the median is reported)")
			fs.BoolVar(&o.JSON, "json", false, "print the result as JSON instead of a table")
			return func(ctx context.Context, stdout, stderr io.Writer) error {
				if o.Duration <= 0 || o.Rounds < 1 {
					return errors.New("--duration and --rounds must be positive")
				}
				r, err := Moderation(ctx, o, stderr)
				if err != nil {
					return err
				}
				if o.JSON {
					enc := json.NewEncoder(stdout)
					enc.SetIndent("", "  ")
					return enc.Encode(r)
				}
				printModeration(stdout, r)
				return nil
			}
		}})
}

// Moderation measures the engine: quality on the evaluation set, the
// classifier alone on the public data sets' held-out rows, and checks per
// second. Progress goes to progress.
func Moderation(ctx context.Context, o ModerationOptions, progress io.Writer) (*ModerationResult, error) {
	e, err := moderation.New()
	if err != nil {
		return nil, err
	}
	check := func(s string) moderation.Result { return e.Check(s, moderation.ContextMessage) }
	r := &ModerationResult{EngineVersion: e.Version(), Targets: map[string]float64{
		"block_precision_min": eval.Targets.BlockPrecision, "recall_threat_self_harm_hate_min": eval.Targets.RecallSevere,
		"recall_other_min": eval.Targets.RecallOther, "false_flag_rate_max": eval.Targets.FalseFlagRate,
		"obfuscated_ratio_min": eval.Targets.ObfuscatedRatio, "checks_per_second_per_core_min": 20000}}
	for _, split := range []string{eval.HeldOut, eval.Dev} {
		items, err := eval.Load(split)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(progress, "bench moderation: scoring %d texts of the %s split\n", len(items), split)
		rep := eval.Score(split, items, check)
		if split == eval.HeldOut {
			r.HeldOut = rep
		} else {
			r.Dev = rep
		}
	}
	r.Failures = r.HeldOut.Failures()
	if r.Failures == nil {
		r.Failures = []string{}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	fmt.Fprintln(progress, "bench moderation: classifier on the public data sets' held-out rows (6,000 texts)")
	lex, err := lexicon.Load()
	if err != nil {
		return nil, err
	}
	m, err := classify.Default()
	if err != nil {
		return nil, err
	}
	dav, err := publicdata.Davidson()
	if err != nil {
		return nil, err
	}
	sms, err := publicdata.SMS()
	if err != nil {
		return nil, err
	}
	_, dHeld := classify.Split(heldOnly(dav), lex, m.Bits)
	_, sHeld := classify.Split(heldOnly(sms), lex, m.Bits)
	r.Classifier = m.EvaluatePublic(dHeld, sHeld)

	var msgs []string
	runes := 0
	for _, split := range []string{eval.Dev, eval.HeldOut} {
		items, _ := eval.Load(split)
		for _, it := range items {
			if it.Source == "" && (it.Kind == "sports_chat" || it.Kind == "logistics" || it.Kind == "trash_talk") {
				msgs = append(msgs, it.Text)
				runes += len([]rune(it.Text))
			}
		}
	}
	tp := ModerationThroughput{GOMAXPROCS: runtime.GOMAXPROCS(0), Messages: len(msgs), MeanRunes: float64(runes) / float64(len(msgs))}
	var walls []float64
	for i := 0; i < 20; i++ { // warm up: caches, the allocator, the CPU clock
		for _, s := range msgs {
			e.Check(s, moderation.ContextMessage)
		}
	}
	for round := 1; round <= o.Rounds; round++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fmt.Fprintf(progress, "bench moderation: throughput round %d of %d (%s, one goroutine)\n", round, o.Rounds, o.Duration)
		cpu, wall := measureChecks(o.Duration, func() int {
			for _, s := range msgs {
				e.Check(s, moderation.ContextMessage)
			}
			return len(msgs)
		})
		tp.Rounds = append(tp.Rounds, cpu)
		walls = append(walls, wall)
	}
	tp.CPUClock = cpuClock
	sorted := append([]float64(nil), tp.Rounds...)
	sort.Float64s(sorted)
	tp.ChecksPerSecond = sorted[len(sorted)/2]
	sort.Float64s(walls)
	tp.WallPerSecond = walls[len(walls)/2]
	tp.MicrosPerCheck = 1e6 / tp.ChecksPerSecond
	r.Throughput = tp
	if tp.ChecksPerSecond < 20000 {
		r.Failures = append(r.Failures, fmt.Sprintf("checks per second per core %.0f < 20000", tp.ChecksPerSecond))
	}
	return r, nil
}

func printModeration(w io.Writer, r *ModerationResult) {
	h := r.HeldOut
	fmt.Fprintf(w, "Moderation engine %s\n\n", r.EngineVersion)
	fmt.Fprintf(w, "Held-out split: %d texts (%d harmless), %d obfuscated copies\n\n", h.Texts, h.Harmless, h.Obfuscated)
	fmt.Fprintf(w, "  %-14s %7s %9s %7s %7s\n", "category", "support", "precision", "recall", "target")
	for _, c := range h.Categories {
		fmt.Fprintf(w, "  %-14s %7d %9s %7.2f %7.2f\n", c.Category, c.Support, precision(c), c.Recall, eval.RecallTarget(c.Category))
	}
	fmt.Fprintf(w, "\n  block precision          %6.3f   (%d blocked; target >= %.2f)\n", h.BlockPrecision, h.Blocked, eval.Targets.BlockPrecision)
	fmt.Fprintf(w, "  false flags on harmless  %6.3f   (%d of %d; target <= %.2f)\n", h.FalseFlagRate, h.FalseFlags, h.Harmless, eval.Targets.FalseFlagRate)
	fmt.Fprintf(w, "  recall obfuscated/clean  %6.3f   (%.3f / %.3f; target >= %.2f)\n", h.ObfuscatedRatio, h.ObfuscatedRecall, h.CleanRecall, eval.Targets.ObfuscatedRatio)
	var kinds []string
	for k := range h.ByObfuscation {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	fmt.Fprint(w, "    by obfuscation:")
	for _, k := range kinds {
		fmt.Fprintf(w, " %s %.2f", k, h.ByObfuscation[k])
	}
	d := r.Dev
	fmt.Fprintf(w, "\n\nDevelopment split (tuned on): block precision %.3f, false flags %.3f, obfuscated/clean %.3f, %d targets missed\n",
		d.BlockPrecision, d.FalseFlagRate, d.ObfuscatedRatio, len(d.Failures()))

	c := r.Classifier
	pd, ps := PublishedDavidson, PublishedSMS
	fmt.Fprintf(w, "\nClassifier alone, held-out rows of the public data sets (published figures beside)\n")
	fmt.Fprintf(w, "  Davidson et al. 2017, %d tweets   weighted P %.2f R %.2f F1 %.2f   hate P %.2f R %.2f\n",
		c.Davidson.Rows, c.Davidson.Weighted.Precision, c.Davidson.Weighted.Recall, c.Davidson.Weighted.F1, c.Davidson.Classes[0].Precision, c.Davidson.Classes[0].Recall)
	fmt.Fprintf(w, "    published (LR, 5-fold)             weighted P %.2f R %.2f F1 %.2f   hate P %.2f R %.2f\n",
		pd.Precision, pd.Recall, pd.F1, pd.HatePrecision, pd.HateRecall)
	fmt.Fprintf(w, "  SMS Spam Collection, %d messages   accuracy %.3f  spam caught %.3f  blocked ham %.4f\n",
		c.SMS.Rows, c.SMS.Accuracy, c.SMS.SpamCaught, c.SMS.BlockedHam)
	fmt.Fprintf(w, "    published (Almeida et al. 2011)    accuracy %.3f  spam caught %.3f  blocked ham %.4f\n",
		ps.Accuracy, ps.SpamCaught, ps.BlockedHam)

	t := r.Throughput
	fmt.Fprintf(w, "\nThroughput: %.0f checks/s per core (%.1f µs of CPU per check; target >= 20000)\n", t.ChecksPerSecond, t.MicrosPerCheck)
	fmt.Fprintf(w, "  one goroutine on a locked thread, GOMAXPROCS %d, %d typical chat messages of %.0f code points on average;\n", t.GOMAXPROCS, t.Messages, t.MeanRunes)
	fmt.Fprintf(w, "  per %s CPU-second, rounds %v; %.0f checks per wall-clock second (lower when the machine is shared)\n", t.CPUClock, roundAll(t.Rounds), t.WallPerSecond)
	if len(r.Failures) == 0 {
		fmt.Fprintln(w, "\nAll targets met on the held-out split.")
	} else {
		fmt.Fprintf(w, "\nTargets missed on the held-out split: %v\n", r.Failures)
	}
}

func precision(c eval.CategoryScore) string {
	if c.TP+c.FP == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", c.Precision)
}

func roundAll(xs []float64) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x)
	}
	return out
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

// measureChecks runs work on one locked OS thread for d and returns checks
// per CPU-second of that thread (per wall-clock second where the system
// cannot tell a thread's CPU time) and per wall-clock second. CPU time is
// the figure "per core": on a shared machine the wall clock also counts the
// time other processes had the core.
func measureChecks(d time.Duration, work func() int) (perCPU, perWall float64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := 0
	cpu0 := threadCPU()
	start := time.Now()
	for time.Since(start) < d {
		n += work()
	}
	wall := time.Since(start)
	cpu := threadCPU() - cpu0
	if cpu <= 0 {
		cpu = wall
	}
	return float64(n) / cpu.Seconds(), float64(n) / wall.Seconds()
}
