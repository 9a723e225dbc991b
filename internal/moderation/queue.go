package moderation

import (
	"context"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/ids"
)

// Cases lists the review queue: cases of a status ("" any) and kind ("" any),
// highest risk first, then oldest, after the cursor case.
func (s *Service) Cases(ctx context.Context, status, kind, after string, limit int) ([]*Case, error) {
	if status != "" && status != CaseOpen && status != CaseClosed {
		return nil, apperr.InvalidParam("status", "validation_failed", "status must be open or closed")
	}
	if kind != "" && kind != KindContent && kind != KindAppeal {
		return nil, apperr.InvalidParam("kind", "validation_failed", "kind must be content or appeal")
	}
	return s.store.Cases(ctx, status, kind, after, limit)
}

// Case returns one case with its latest reports.
func (s *Service) Case(ctx context.Context, id string) (*Case, []*Report, error) {
	if !ids.Valid(ids.Case, id) {
		return nil, nil, apperr.NotFoundf("no case %q", id)
	}
	c, err := s.store.Case(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	rs, err := s.store.ReportsOf(ctx, id, 100)
	if err != nil {
		return nil, nil, err
	}
	return c, rs, nil
}

// Audit lists every decision, engine or human, newest first, optionally
// about one user.
func (s *Service) Audit(ctx context.Context, subjectID, before string, limit int) ([]*Record, error) {
	return s.store.Decisions(ctx, subjectID, before, limit)
}
