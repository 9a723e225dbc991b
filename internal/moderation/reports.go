package moderation

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/ids"
)

// NewReport is what a user sends to report something.
type NewReport struct {
	TargetType string
	TargetID   string
	Reason     string
	Details    string
	Block      bool // also block the target's author
}

// reasonWeight is how much one report of a reason raises its case's risk.
var reasonWeight = map[string]float64{
	"threat": 0.6, "self_harm": 0.6, "underage": 0.6, "hate": 0.5, "sexual": 0.4, "scam": 0.4,
	"harassment": 0.35, "fake_profile": 0.25, "spam": 0.2, "other": 0.15,
}

// AddRisk raises a risk score by a new, independent piece of evidence of
// weight w: 1 - (1-r)(1-w), so it grows with each and never passes 1.
func AddRisk(r, w float64) float64 { return 1 - (1-r)*(1-min(max(w, 0), 1)) }

// Report files reporterID's report. The reporter must be able to see the
// target (else 404, as reading it would answer); the texts as they are now
// are kept as evidence whatever happens to them later. The report joins the
// target's open case, or opens one.
func (s *Service) Report(ctx context.Context, reporterID string, in NewReport) (*Report, *Case, error) {
	if !slices.Contains(TargetTypes, in.TargetType) {
		return nil, nil, apperr.InvalidParam("target_type", "validation_failed", "target_type must be one of %s", strings.Join(TargetTypes, ", "))
	}
	if !slices.Contains(ReportReasons, in.Reason) {
		return nil, nil, apperr.InvalidParam("reason", "validation_failed", "reason must be one of %s", strings.Join(ReportReasons, ", "))
	}
	if utf8.RuneCountInString(in.Details) > MaxText {
		return nil, nil, apperr.InvalidParam("details", "validation_failed", "details must be at most %d characters", MaxText)
	}
	t, ok := s.targets[in.TargetType]
	if !ok {
		return nil, nil, apperr.InvalidParam("target_type", "validation_failed", "%s cannot be reported on this server", in.TargetType)
	}
	c, err := t.Read(ctx, reporterID, in.TargetID)
	if err != nil {
		return nil, nil, err
	}
	if c.AuthorID == reporterID {
		return nil, nil, apperr.InvalidParam("target_id", "cannot_report_self", "you cannot report yourself or what you wrote")
	}
	now := s.clock.Now()
	r := &Report{
		ID: ids.New(ids.Report), ReporterID: reporterID, TargetType: in.TargetType, TargetID: c.ID, SubjectID: c.AuthorID,
		Reason: in.Reason, Details: strings.TrimSpace(in.Details), Evidence: c.Texts, CreatedAt: now,
	}
	fresh := &Case{
		ID: ids.New(ids.Case), Kind: KindContent, TargetType: in.TargetType, TargetID: c.ID, SubjectID: c.AuthorID,
		Status: CaseOpen, Reasons: []string{in.Reason}, ReportCount: 1, RiskScore: AddRisk(0, reasonWeight[in.Reason]),
		Evidence: c.Texts, CreatedAt: now, UpdatedAt: now,
	}
	cs, err := s.store.CreateReport(ctx, r, fresh)
	if err != nil {
		return nil, nil, err
	}
	if in.Block && s.block != nil {
		if err := s.block(ctx, reporterID, c.AuthorID); err != nil && !apperr.IsKind(err, apperr.Conflict) {
			return nil, nil, err
		}
	}
	return r, cs, nil
}
