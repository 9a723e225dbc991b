package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/moderation"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// ReportOut is a report as its author (and operators) see it.
type ReportOut struct {
	Object     string `json:"object" enum:"report"`
	ID         string `json:"id" example:"rpt_01jd3m5x7k2q9r8s6t4v0w1y2z"`
	Status     string `json:"status" enum:"open,closed" doc:"open until an operator decides its case"`
	TargetType string `json:"target_type" enum:"user,message,event"`
	TargetID   string `json:"target_id"`
	Reason     string `json:"reason"`
	Details    string `json:"details"`
	CreatedAt  string `json:"created_at" format:"date-time"`
}

func reportOf(r *moderation.Report, status string) ReportOut {
	return ReportOut{Object: "report", ID: r.ID, Status: status, TargetType: r.TargetType, TargetID: r.TargetID,
		Reason: r.Reason, Details: r.Details, CreatedAt: wire.Time(r.CreatedAt)}
}

func (s *server) registerReports(tags []string) {
	huma.Register(s.api, huma.Operation{
		OperationID: "create-report", Method: http.MethodPost, Path: "/v1/reports", Tags: tags,
		Summary: "Report a user, a message or an event",
		Description: "You can report only what you can see (else 404, as reading it answers). The text as it is now (profile, message, event) is kept " +
			"for moderators even if its author changes or deletes it. The report joins the target's open case in the review queue. " +
			"\"block\": true also blocks the user (the author) in the same step. 409 already_reported for a second report of the same open case; " +
			"422 cannot_report_self. Scope: write." + moderationAlpha,
		Security:      requires(auth.ScopeWrite),
		DefaultStatus: http.StatusCreated,
	}, func(ctx context.Context, in *struct {
		Body struct {
			TargetType string `json:"target_type" enum:"user,message,event"`
			TargetID   string `json:"target_id" maxLength:"64"`
			Reason     string `json:"reason" enum:"harassment,hate,threat,self_harm,sexual,spam,scam,fake_profile,underage,other"`
			Details    string `json:"details,omitempty" maxLength:"2000"`
			Block      bool   `json:"block,omitempty" doc:"Also block the user reported, or the author of what is reported"`
		}
	}) (*struct{ Body ReportOut }, error) {
		b := in.Body
		r, c, err := s.moderation.Report(ctx, principalOf(ctx).UserID, moderation.NewReport{
			TargetType: b.TargetType, TargetID: b.TargetID, Reason: b.Reason, Details: b.Details, Block: b.Block})
		if err != nil {
			return nil, err
		}
		return &struct{ Body ReportOut }{Body: reportOf(r, c.Status)}, nil
	})
}
