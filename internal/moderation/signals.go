package moderation

import (
	"context"
	"log/slog"
	"sort"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/ids"
)

// Behaviour signals, counted per user over the window.
const (
	SignalReportsAgainst  = "reports_against"   // distinct people reporting the user or what they wrote
	SignalBlocksAgainst   = "blocks_against"    // people who blocked the user
	SignalNewAccountLinks = "new_account_links" // texts with links by an account younger than NewAccountAge
	SignalFanout          = "fanout"            // people messaged with no match or earlier conversation
	SignalSameText        = "same_text"         // people sent one same text
)

// signalWeight is how much a signal at its threshold adds to a user's risk:
// any one signal at its threshold reaches the default CaseRisk.
const signalWeight = 0.6

func (s *Service) threshold(name string) int {
	switch name {
	case SignalReportsAgainst:
		return s.cfg.ReportsAgainst
	case SignalBlocksAgainst:
		return s.cfg.BlocksAgainst
	case SignalNewAccountLinks:
		return s.cfg.NewAccountLinks
	case SignalFanout:
		return s.cfg.Fanout
	case SignalSameText:
		return s.cfg.SameText
	}
	return 0
}

// Risk combines a user's signal counts: each signal adds its share of
// signalWeight, in proportion to how close it is to its threshold.
func (s *Service) Risk(counts map[string]int) float64 {
	r := 0.0
	for name, n := range counts {
		if t := s.threshold(name); t > 0 && n > 0 {
			r = AddRisk(r, signalWeight*min(1, float64(n)/float64(t)))
		}
	}
	return r
}

// ComputeSignals recomputes every user's signals and risk from what was
// stored over the window, and opens (or joins) a case for each user whose
// risk reaches CaseRisk. It reads the data after the fact, so nothing is
// added to the requests that wrote it.
func (s *Service) ComputeSignals(ctx context.Context) ([]*Signals, error) {
	now := s.clock.Now()
	got, err := s.store.Signals(ctx, now.Add(-s.cfg.SignalWindow), now.Add(-s.cfg.NewAccountAge))
	if err != nil {
		return nil, err
	}
	for _, sg := range got {
		sg.RiskScore = s.Risk(sg.Counts)
	}
	if err := s.store.SaveRisk(ctx, got, now); err != nil {
		return nil, err
	}
	for _, sg := range got {
		if sg.RiskScore < s.cfg.CaseRisk {
			continue
		}
		var reasons []string
		for name, n := range sg.Counts {
			if n >= s.threshold(name) {
				reasons = append(reasons, "signal:"+name)
			}
		}
		if len(reasons) == 0 {
			reasons = []string{"signal:combined"}
		}
		sort.Strings(reasons)
		c := &Case{
			ID: ids.New(ids.Case), Kind: KindContent, TargetType: TargetUser, TargetID: sg.UserID, SubjectID: sg.UserID,
			Status: CaseOpen, Reasons: reasons, RiskScore: sg.RiskScore, Evidence: map[string]string{}, Automated: true,
			CreatedAt: now, UpdatedAt: now,
		}
		if err := s.store.OpenSignalCase(ctx, c, now.Add(-s.cfg.SignalWindow)); err != nil {
			return nil, err
		}
	}
	return got, nil
}

// RunSignals recomputes the signals every SignalInterval until ctx ends.
// Every node may run it: a pass is idempotent.
func (s *Service) RunSignals(ctx context.Context, log *slog.Logger) {
	t := time.NewTicker(s.cfg.SignalInterval)
	defer t.Stop()
	for {
		if _, err := s.ComputeSignals(ctx); err != nil && ctx.Err() == nil {
			log.Warn("compute behaviour signals", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
