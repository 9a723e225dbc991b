package users

import (
	"context"
	"slices"
	"strings"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
)

// MaxNote bounds the free text of verification requests and reviews.
const MaxNote = 1000

// RequestVerification files an ID verification request. One may be pending
// at a time, and a verified account needs none.
func (s *Service) RequestVerification(ctx context.Context, userID, documentType, note string) (*Verification, error) {
	u, err := s.Get(ctx, userID)
	if err != nil {
		return nil, err
	}
	if u.Verified {
		return nil, apperr.Conflictf("already_verified", "", "the account is already verified")
	}
	if !slices.Contains(DocumentTypes, documentType) {
		return nil, apperr.InvalidParam("document_type", "invalid_document_type", "document_type must be one of %s", strings.Join(DocumentTypes, ", "))
	}
	if err := checkText("note", note, MaxNote); err != nil {
		return nil, err
	}
	v := &Verification{
		ID: ids.New(ids.Verification), UserID: userID, Status: VerificationPending,
		DocumentType: documentType, Note: strings.TrimSpace(note), CreatedAt: s.clock.Now(),
	}
	if err := s.store.CreateVerification(ctx, v); err != nil {
		return nil, err
	}
	return v, nil
}

// LatestVerification returns the user's most recent request.
func (s *Service) LatestVerification(ctx context.Context, userID string) (*Verification, error) {
	return s.store.LatestVerification(ctx, userID)
}

// GetVerification returns one request.
func (s *Service) GetVerification(ctx context.Context, id string) (*Verification, error) {
	if !ids.Valid(ids.Verification, id) {
		return nil, apperr.NotFoundf("no verification request %q", id)
	}
	return s.store.VerificationByID(ctx, id)
}

// ListVerifications pages through requests of a status ("" for all), oldest
// first, after the cursor id.
func (s *Service) ListVerifications(ctx context.Context, status, after string, limit int) ([]*Verification, error) {
	if status != "" && status != VerificationPending && status != VerificationApproved && status != VerificationRejected {
		return nil, apperr.InvalidParam("status", "invalid_status", "status must be pending, approved or rejected")
	}
	return s.store.ListVerifications(ctx, status, after, limit)
}

// ReviewVerification approves or rejects a pending request. Approval marks
// the account verified and records user.verified.
func (s *Service) ReviewVerification(ctx context.Context, reviewerID, id string, approve bool, note string) (*Verification, error) {
	v, err := s.GetVerification(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := checkText("note", note, MaxNote); err != nil {
		return nil, err
	}
	if v.UserID == reviewerID {
		return nil, apperr.Forbiddenf("forbidden", "an operator may not review their own verification request")
	}
	if v.Status != VerificationPending {
		return nil, apperr.Conflictf("already_reviewed", "", "the request was already %s", v.Status)
	}
	now := s.clock.Now()
	v.ReviewerID, v.ReviewNote, v.ReviewedAt = reviewerID, strings.TrimSpace(note), &now
	var ev *outbox.Event
	if approve {
		v.Status = VerificationApproved
		u, err := s.Get(ctx, v.UserID)
		if err != nil {
			return nil, err
		}
		u.Verified = true
		if ev, err = userEvent(now, outbox.UserVerified, u); err != nil {
			return nil, err
		}
	} else {
		v.Status = VerificationRejected
	}
	if err := s.store.ReviewVerification(ctx, v, ev); err != nil {
		return nil, err
	}
	return v, nil
}
