package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/users"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// Verification is an ID verification request.
type Verification struct {
	Object       string  `json:"object" enum:"verification"`
	ID           string  `json:"id"`
	UserID       string  `json:"user_id"`
	Status       string  `json:"status" enum:"pending,approved,rejected"`
	DocumentType string  `json:"document_type" enum:"passport,national_id,driving_licence,residence_permit"`
	Note         string  `json:"note"`
	ReviewNote   string  `json:"review_note"`
	CreatedAt    string  `json:"created_at" format:"date-time"`
	ReviewedAt   *string `json:"reviewed_at" format:"date-time"`
}

func verificationOf(v *users.Verification) Verification {
	return Verification{Object: "verification", ID: v.ID, UserID: v.UserID, Status: v.Status, DocumentType: v.DocumentType,
		Note: v.Note, ReviewNote: v.ReviewNote, CreatedAt: wire.Time(v.CreatedAt), ReviewedAt: wire.OptTime(v.ReviewedAt)}
}

type verificationOut struct{ Body Verification }

// ReviewVerificationRequest is the optional body of approve and reject.
type ReviewVerificationRequest struct {
	Note string `json:"note,omitempty" maxLength:"1000" doc:"Reason, shown to the user"`
}

type reviewIn struct {
	ID   string `path:"id" maxLength:"64"`
	Body *ReviewVerificationRequest
}

func (s *server) registerVerification() {
	tags := []string{"ID verification"}
	huma.Register(s.api, huma.Operation{
		OperationID: "request-verification", Method: http.MethodPost, Path: "/v1/users/me/verification", Tags: tags,
		Summary:       "Ask for ID verification",
		Description:   "Files a request that an operator reviews. One may be pending at a time. Scope: write or profile.",
		Security:      requires(auth.ScopeWrite, auth.ScopeProfile),
		DefaultStatus: http.StatusCreated,
	}, func(ctx context.Context, in *struct {
		Body struct {
			DocumentType string `json:"document_type" enum:"passport,national_id,driving_licence,residence_permit"`
			Note         string `json:"note,omitempty" maxLength:"1000"`
		}
	}) (*verificationOut, error) {
		v, err := s.users.RequestVerification(ctx, principalOf(ctx).UserID, in.Body.DocumentType, in.Body.Note)
		if err != nil {
			return nil, err
		}
		return &verificationOut{Body: verificationOf(v)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "get-verification", Method: http.MethodGet, Path: "/v1/users/me/verification", Tags: tags,
		Summary:     "Your latest verification request",
		Description: "404 if you never asked. Scope: read or profile.",
		Security:    requires(auth.ScopeRead, auth.ScopeProfile),
	}, func(ctx context.Context, _ *struct{}) (*verificationOut, error) {
		v, err := s.users.LatestVerification(ctx, principalOf(ctx).UserID)
		if err != nil {
			return nil, err
		}
		return &verificationOut{Body: verificationOf(v)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "list-verifications", Method: http.MethodGet, Path: "/v1/verifications", Tags: tags,
		Summary:     "List verification requests (operators)",
		Description: "Oldest first. Scope: admin, on an operator account.",
		Security:    requires(auth.ScopeAdmin),
	}, func(ctx context.Context, in *struct {
		ListParams
		Status string `query:"status" enum:"pending,approved,rejected" doc:"Only requests in this status"`
	}) (*struct{ Body List[Verification] }, error) {
		if _, err := operator(ctx); err != nil {
			return nil, err
		}
		if !validCursor("ver_", in.Cursor) {
			return nil, apperr.InvalidParam("cursor", "invalid_cursor", "cursor is not one this list returned")
		}
		vs, err := s.users.ListVerifications(ctx, in.Status, in.Cursor, in.Limit+1)
		if err != nil {
			return nil, err
		}
		return &struct{ Body List[Verification] }{Body: listOf(vs, in.Limit,
			func(v *users.Verification) string { return v.ID }, verificationOf)}, nil
	})

	for _, decision := range []struct {
		name, title string
		approve     bool
		desc        string
	}{
		{"approve", "Approve", true, "Marks the user verified and records user.verified."},
		{"reject", "Reject", false, "Closes the request; the user may file another."},
	} {
		huma.Register(s.api, huma.Operation{
			OperationID: decision.name + "-verification", Method: http.MethodPost, Path: "/v1/verifications/{id}/" + decision.name, Tags: tags,
			Summary:     decision.title + " a verification request (operators)",
			Description: decision.desc + " Scope: admin, on an operator account.",
			Security:    requires(auth.ScopeAdmin),
		}, func(ctx context.Context, in *reviewIn) (*verificationOut, error) {
			p, err := operator(ctx)
			if err != nil {
				return nil, err
			}
			note := ""
			if in.Body != nil {
				note = in.Body.Note
			}
			v, err := s.users.ReviewVerification(ctx, p.UserID, in.ID, decision.approve, note)
			if err != nil {
				return nil, err
			}
			return &verificationOut{Body: verificationOf(v)}, nil
		})
	}
}
