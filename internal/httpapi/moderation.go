package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/messaging"
	"github.com/matchpoint-api/matchpoint/internal/moderation"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

const moderationAlpha = " Safety and moderation are an ALPHA family: every response carries `Matchpoint-Maturity: alpha`."

// ModerationResult is the engine's answer, the same wherever a decision is shown.
type ModerationResult struct {
	Decision   string             `json:"decision" enum:"allow,warn,review,block"`
	Categories map[string]float64 `json:"categories" doc:"Every category with its score 0..1: harassment, hate, threat, self_harm, sexual, sexual_minors, personal_data, off_platform, scam, spam, profanity"`
	Flagged    []string           `json:"flagged" doc:"Categories at or above the threshold"`
	Spans      []ModerationSpan   `json:"spans" doc:"Where each flagged category was found"`
	Reason     string             `json:"reason"`
	Language   string             `json:"language" doc:"ISO 639-1 code of the detected language, or und; only English gets every detector"`
	Support    *ModerationSupport `json:"support,omitempty" doc:"With self_harm: where to find help"`
}

// ModerationSpan is a half-open range of Unicode code points of the text as sent.
type ModerationSpan struct {
	Start    int    `json:"start"`
	End      int    `json:"end"`
	Category string `json:"category"`
}

// ModerationSupport is shown with self-harm.
type ModerationSupport struct {
	Message   string                `json:"message"`
	Resources []moderation.Resource `json:"resources"`
}

func moderationResultOf(r moderation.Result) ModerationResult {
	out := ModerationResult{Decision: string(r.Decision), Categories: map[string]float64{}, Flagged: []string{}, Spans: []ModerationSpan{},
		Reason: r.Reason, Language: r.Language}
	for c, v := range r.Categories {
		out.Categories[string(c)] = v
	}
	for _, c := range r.Flagged {
		out.Flagged = append(out.Flagged, string(c))
	}
	for _, sp := range r.Spans {
		out.Spans = append(out.Spans, ModerationSpan{Start: sp.Start, End: sp.End, Category: string(sp.Category)})
	}
	if r.Support != nil {
		out.Support = &ModerationSupport{Message: r.Support.Message, Resources: r.Support.Resources}
	}
	return out
}

// ModerationCase is an entry of the review queue.
type ModerationCase struct {
	Object           string            `json:"object" enum:"moderation_case"`
	ID               string            `json:"id" example:"cas_01jd3m5x7k2q9r8s6t4v0w1y2z"`
	Kind             string            `json:"kind" enum:"content,appeal" doc:"content: reports and automated flags about one target; appeal: the affected user contests a decision"`
	TargetType       string            `json:"target_type" enum:"user,message,event"`
	TargetID         string            `json:"target_id"`
	SubjectID        string            `json:"subject_id" doc:"The user the case is about: the author, or the reported user"`
	Status           string            `json:"status" enum:"open,closed"`
	Reasons          []string          `json:"reasons" doc:"Report reasons, flagged categories and signal:<name> for behaviour signals, merged"`
	ReportCount      int               `json:"report_count"`
	RiskScore        float64           `json:"risk_score" doc:"0..1; the queue is ordered by it, then by age"`
	SubjectRiskScore float64           `json:"subject_risk_score" doc:"The subject's behaviour risk, 0..1"`
	Evidence         map[string]string `json:"evidence" doc:"The texts as they were when first flagged or reported, kept whatever happens to them"`
	Held             bool              `json:"held" doc:"The content is held until a decision"`
	Automated        bool              `json:"automated" doc:"Automated means (the engine, behaviour signals) flagged it"`
	DecisionID       string            `json:"decision_id,omitempty" doc:"appeal: the decision contested"`
	Details          string            `json:"details,omitempty" doc:"appeal: what the user says"`
	Reports          []ReportOut       `json:"reports,omitempty" doc:"The reports, on GET of one case"`
	CreatedAt        string            `json:"created_at" format:"date-time"`
	UpdatedAt        string            `json:"updated_at" format:"date-time"`
	ClosedAt         *string           `json:"closed_at" format:"date-time"`
}

func caseOf(c *moderation.Case) ModerationCase {
	return ModerationCase{Object: "moderation_case", ID: c.ID, Kind: c.Kind, TargetType: c.TargetType, TargetID: c.TargetID,
		SubjectID: c.SubjectID, Status: c.Status, Reasons: nonNil(c.Reasons), ReportCount: c.ReportCount, RiskScore: round3(c.RiskScore),
		SubjectRiskScore: round3(c.SubjectRisk), Evidence: nonNilMap(c.Evidence), Held: c.Held, Automated: c.Automated,
		DecisionID: c.DecisionID, Details: c.Details, CreatedAt: wire.Time(c.CreatedAt), UpdatedAt: wire.Time(c.UpdatedAt), ClosedAt: wire.OptTime(c.ClosedAt)}
}

func round3(f float64) float64 { return float64(int(f*1000+0.5)) / 1000 }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// ModerationDecision is one decision of the audit log: by the engine
// (automated, no actor) or by an operator.
type ModerationDecision struct {
	Object        string   `json:"object" enum:"moderation_decision"`
	ID            string   `json:"id" example:"dec_01jd3m5x7k2q9r8s6t4v0w1y2z"`
	CaseID        *string  `json:"case_id"`
	TargetType    string   `json:"target_type" enum:"user,message,event"`
	TargetID      string   `json:"target_id" doc:"Empty for a text refused before it was saved"`
	SubjectID     string   `json:"subject_id"`
	ActorID       *string  `json:"actor_id" doc:"The operator; null for the engine and the terminal"`
	Automated     bool     `json:"automated" doc:"Decided by the engine, not a person"`
	Action        string   `json:"action" doc:"Operators: dismiss, remove_content, release, warn_user, suspend_user (also unsuspend_user from the terminal); the engine: warn, review, block"`
	Reason        string   `json:"reason"`
	Categories    []string `json:"categories"`
	EngineVersion string   `json:"engine_version,omitempty"`
	EndsAt        *string  `json:"ends_at,omitempty" format:"date-time" doc:"suspend_user: when the suspension ends"`
	CreatedAt     string   `json:"created_at" format:"date-time"`
}

func decisionOf(r *moderation.Record) ModerationDecision {
	d := ModerationDecision{Object: "moderation_decision", ID: r.ID, TargetType: r.TargetType, TargetID: r.TargetID, SubjectID: r.SubjectID,
		Automated: r.Automated, Action: r.Action, Reason: r.Reason, Categories: nonNil(r.Categories), EngineVersion: r.EngineVersion,
		EndsAt: wire.OptTime(r.EndsAt), CreatedAt: wire.Time(r.CreatedAt)}
	if r.CaseID != "" {
		d.CaseID = &r.CaseID
	}
	if r.ActorID != "" {
		d.ActorID = &r.ActorID
	}
	return d
}

// moderator admits operators acting with the admin scope.
func moderator(ctx context.Context) (*auth.Principal, error) {
	p := principalOf(ctx)
	if !p.IsOperator() {
		return nil, apperr.Forbiddenf("forbidden", "only operators of this service may use the review queue")
	}
	return p, nil
}

// screened checks the free texts of a write with the engine: a block is
// refused (422 content_blocked) before write runs; otherwise write runs and
// the engine's decision about what it saved (its id) is recorded, queueing
// a case when it needs a person.
func screened[T any](ctx context.Context, s *server, authorID, typ, targetID string, c moderation.Context, texts map[string]string,
	write func() (T, string, error)) (T, error) {
	var zero T
	if s.moderation == nil {
		v, _, err := write()
		return v, err
	}
	sc, err := s.moderation.Screen(ctx, authorID, typ, targetID, c, texts)
	if err != nil {
		return zero, err
	}
	v, id, err := write()
	if err != nil {
		return zero, err
	}
	return v, sc.Record(ctx, id)
}

// profileTexts are a profile patch's free texts.
func profileTexts(p *ProfilePatch) map[string]string {
	t := map[string]string{}
	for name, v := range map[string]*string{"username": p.Username, "first_name": p.FirstName, "last_name": p.LastName, "bio": p.Bio} {
		if v != nil {
			t[name] = *v
		}
	}
	return t
}

// eventTexts are an event's title and description.
func eventTexts(title, description *string) map[string]string {
	t := map[string]string{}
	if title != nil {
		t["title"] = *title
	}
	if description != nil {
		t["description"] = *description
	}
	return t
}

// suspendedMayUse is what a suspended account may still do: read the
// decisions about it and appeal them (DSA Art. 20).
func suspendedMayUse(r *http.Request) bool {
	p := r.URL.Path
	switch r.Method {
	case http.MethodGet:
		return p == "/v1/moderation/decisions"
	case http.MethodPost:
		rest, ok := strings.CutPrefix(p, "/v1/moderation/decisions/")
		return ok && strings.HasSuffix(rest, "/appeal") && !strings.Contains(strings.TrimSuffix(rest, "/appeal"), "/")
	}
	return false
}

type caseOut struct{ Body ModerationCase }

type decisionOut struct{ Body ModerationDecision }

func (s *server) registerModeration() {
	tags := []string{"Safety and moderation"}
	huma.Register(s.api, huma.Operation{
		OperationID: "check-text", Method: http.MethodPost, Path: "/v1/moderation/check", Tags: tags,
		Summary: "Check a text before sending it",
		Description: "Runs the moderation engine (offline, inside the service) on a text so an app can nudge before sending; nothing is stored. " +
			"Decisions: threat, hate and sexual_minors block; scam reviews or blocks; harassment, sexual, spam, personal_data and off_platform warn; " +
			"self_harm is always review and adds support resources; profanity not aimed at anyone is allowed. Scope: read." + moderationAlpha,
		Security: requires(auth.ScopeRead),
	}, func(ctx context.Context, in *struct {
		Body struct {
			Text    string `json:"text" maxLength:"10000"`
			Context string `json:"context,omitempty" enum:"message,profile,event" doc:"Where the text will appear; default message"`
		}
	}) (*struct{ Body ModerationResult }, error) {
		r := s.moderation.Check(in.Body.Text, moderation.Context(in.Body.Context))
		return &struct{ Body ModerationResult }{Body: moderationResultOf(r)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "list-moderation-cases", Method: http.MethodGet, Path: "/v1/moderation/cases", Tags: tags,
		Summary:     "The review queue (operators)",
		Description: "Cases, one per target, merging its reports and automated flags; highest risk first, then oldest. Scope: admin, on an operator account." + moderationAlpha,
		Security:    requires(auth.ScopeAdmin),
	}, func(ctx context.Context, in *struct {
		ListParams
		Status string `query:"status" enum:"open,closed" doc:"Only cases in this status"`
		Kind   string `query:"kind" enum:"content,appeal" doc:"Only cases of this kind"`
	}) (*struct{ Body List[ModerationCase] }, error) {
		if _, err := moderator(ctx); err != nil {
			return nil, err
		}
		if !validCursor("cas_", in.Cursor) {
			return nil, apperr.InvalidParam("cursor", "invalid_cursor", "cursor is not one this list returned")
		}
		cs, err := s.moderation.Cases(ctx, in.Status, in.Kind, in.Cursor, in.Limit+1)
		if err != nil {
			return nil, err
		}
		return &struct{ Body List[ModerationCase] }{Body: listOf(cs, in.Limit, func(c *moderation.Case) string { return c.ID }, caseOf)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "get-moderation-case", Method: http.MethodGet, Path: "/v1/moderation/cases/{id}", Tags: tags,
		Summary:     "A case with its reports (operators)",
		Description: "Scope: admin, on an operator account." + moderationAlpha,
		Security:    requires(auth.ScopeAdmin),
	}, func(ctx context.Context, in *struct {
		ID string `path:"id" maxLength:"64"`
	}) (*caseOut, error) {
		if _, err := moderator(ctx); err != nil {
			return nil, err
		}
		c, rs, err := s.moderation.Case(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		out := caseOf(c)
		for _, r := range rs {
			out.Reports = append(out.Reports, reportOf(r, c.Status))
		}
		return &caseOut{Body: out}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "decide-moderation-case", Method: http.MethodPost, Path: "/v1/moderation/cases/{id}/decision", Tags: tags,
		Summary: "Decide a case (operators)",
		Description: "The action takes effect at once and the case closes; the affected user gets a notification (moderation.decision) with a statement of reasons: " +
			"what was decided, why, whether automated means were involved, and how to appeal. dismiss: no violation (held content goes out); " +
			"remove_content: the content is taken down (a profile's bio is cleared, an event cancelled); release: held content goes out; " +
			"warn_user: the user is warned; suspend_user: every credential of the account answers 403 account_suspended, for duration_hours or until lifted, " +
			"and its pending match requests and event places are released. An appeal is answered with dismiss (the decision stands) or release " +
			"(it is reversed: a suspension is lifted), by another operator than the one who decided. 409 case_closed if already decided. " +
			"Scope: admin, on an operator account." + moderationAlpha,
		Security: requires(auth.ScopeAdmin),
	}, func(ctx context.Context, in *struct {
		ID   string `path:"id" maxLength:"64"`
		Body struct {
			Action        string `json:"action" enum:"dismiss,remove_content,release,warn_user,suspend_user"`
			Reason        string `json:"reason" maxLength:"2000" doc:"Why; shown to the affected user"`
			DurationHours *int   `json:"duration_hours,omitempty" minimum:"1" maximum:"87600" doc:"suspend_user: how long; absent: until lifted"`
		}
	}) (*decisionOut, error) {
		p, err := moderator(ctx)
		if err != nil {
			return nil, err
		}
		rec, _, err := s.moderation.Decide(ctx, p.UserID, in.ID, moderation.NewDecision{Action: in.Body.Action, Reason: in.Body.Reason, DurationHours: in.Body.DurationHours})
		if err != nil {
			return nil, err
		}
		return &decisionOut{Body: decisionOf(rec)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "list-moderation-audit", Method: http.MethodGet, Path: "/v1/moderation/audit", Tags: tags,
		Summary:     "Every decision, engine or human (operators)",
		Description: "Newest first, with who decided and when. Scope: admin, on an operator account." + moderationAlpha,
		Security:    requires(auth.ScopeAdmin),
	}, func(ctx context.Context, in *struct {
		ListParams
		SubjectID string `query:"subject_id" maxLength:"64" doc:"Only decisions about this user"`
	}) (*struct{ Body List[ModerationDecision] }, error) {
		if _, err := moderator(ctx); err != nil {
			return nil, err
		}
		if !validCursor("dec_", in.Cursor) {
			return nil, apperr.InvalidParam("cursor", "invalid_cursor", "cursor is not one this list returned")
		}
		rs, err := s.moderation.Audit(ctx, in.SubjectID, in.Cursor, in.Limit+1)
		if err != nil {
			return nil, err
		}
		return &struct{ Body List[ModerationDecision] }{Body: listOf(rs, in.Limit, func(r *moderation.Record) string { return r.ID }, decisionOf)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "list-my-moderation-decisions", Method: http.MethodGet, Path: "/v1/moderation/decisions", Tags: tags,
		Summary:     "Decisions about you",
		Description: "Newest first: what was decided about you or what you wrote, by the engine or an operator, so you can appeal. Works while your account is suspended. Scope: read." + moderationAlpha,
		Security:    requires(auth.ScopeRead),
	}, func(ctx context.Context, in *struct{ ListParams }) (*struct{ Body List[ModerationDecision] }, error) {
		if !validCursor("dec_", in.Cursor) {
			return nil, apperr.InvalidParam("cursor", "invalid_cursor", "cursor is not one this list returned")
		}
		rs, err := s.moderation.MyDecisions(ctx, principalOf(ctx).UserID, in.Cursor, in.Limit+1)
		if err != nil {
			return nil, err
		}
		return &struct{ Body List[ModerationDecision] }{Body: listOf(rs, in.Limit, func(r *moderation.Record) string { return r.ID }, decisionOf)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "appeal-moderation-decision", Method: http.MethodPost, Path: "/v1/moderation/decisions/{id}/appeal", Tags: tags,
		Summary: "Appeal a decision about you",
		Description: "Within 6 months of a decision that removed or refused your content, warned or suspended you. Opens an appeal case that a person, " +
			"another operator than the one who decided, resolves (EU DSA Art. 20); you are notified of the outcome. 404 for a decision not about you; " +
			"409 already_appealed, appeal_window_closed or not_appealable. Works while your account is suspended. Scope: write." + moderationAlpha,
		Security:      requires(auth.ScopeWrite),
		DefaultStatus: http.StatusCreated,
	}, func(ctx context.Context, in *struct {
		ID   string `path:"id" maxLength:"64"`
		Body struct {
			Details string `json:"details" maxLength:"2000" doc:"Why the decision is wrong"`
		}
	}) (*struct{ Body Appeal }, error) {
		c, err := s.moderation.Appeal(ctx, principalOf(ctx).UserID, in.ID, in.Body.Details)
		if err != nil {
			return nil, err
		}
		return &struct{ Body Appeal }{Body: Appeal{Object: "appeal", ID: c.ID, DecisionID: c.DecisionID, Status: c.Status,
			Details: c.Details, CreatedAt: wire.Time(c.CreatedAt)}}, nil
	})

	s.registerReports(tags)
}

// Appeal is what the appealing user sees of their appeal: its case.
type Appeal struct {
	Object     string `json:"object" enum:"appeal"`
	ID         string `json:"id" doc:"The appeal's case (cas_)"`
	DecisionID string `json:"decision_id"`
	Status     string `json:"status" enum:"open,closed"`
	Details    string `json:"details"`
	CreatedAt  string `json:"created_at" format:"date-time"`
}

// screenedSend sends a message through the engine: block refuses (422
// content_blocked); review holds it (not delivered, kept in its case, shown
// to its sender as held) unless it is self-harm, which is delivered with a
// case and the support resources; warn delivers, and the sender sees why.
func (s *server) screenedSend(ctx context.Context, convID, senderID, body, replyTo string) (messaging.View, error) {
	if s.moderation == nil {
		m, err := s.messaging.Send(ctx, convID, senderID, body, replyTo)
		if err != nil {
			return messaging.View{}, err
		}
		return messaging.ViewOf(m), nil
	}
	sc, err := s.moderation.Screen(ctx, senderID, moderation.TargetMessage, "", moderation.ContextMessage, map[string]string{"body": body})
	if err != nil {
		return messaging.View{}, err
	}
	if sc.Held() {
		// Only members send: a held message is kept only for one of them.
		// (Send checks membership itself, so the common path reads nothing
		// more.)
		if _, err := s.messaging.Get(ctx, convID, senderID); err != nil {
			return messaging.View{}, err
		}
		id := ids.New(ids.Message)
		if _, err := sc.Hold(ctx, id, map[string]string{"conversation_id": convID, "reply_to": replyTo}); err != nil {
			return messaging.View{}, err
		}
		text := strings.TrimSpace(body)
		v := messaging.View{Object: "message", ID: id, ConversationID: convID, SenderID: senderID, Body: &text,
			CreatedAt: wire.Time(s.moderation.Now()), Status: "held", Moderation: &sc.Result}
		if replyTo != "" {
			v.ReplyTo = &replyTo
		}
		return v, nil
	}
	m, err := s.messaging.Send(ctx, convID, senderID, body, replyTo)
	if err != nil {
		return messaging.View{}, err
	}
	if err := sc.Record(ctx, m.ID); err != nil {
		return messaging.View{}, err
	}
	if sc.Result.Decision != moderation.Allow {
		if err := s.moderation.MarkMessage(ctx, m.ID, &sc.Result); err != nil {
			return messaging.View{}, err
		}
	}
	return withModeration(messaging.ViewOf(m), sc), nil
}

// screenedEdit edits a message through the engine, as screenedSend sends:
// a held edit leaves the message as it was until a moderator releases it.
func (s *server) screenedEdit(ctx context.Context, id, callerID, body string) (messaging.View, error) {
	if s.moderation == nil {
		m, err := s.messaging.Edit(ctx, id, callerID, body)
		if err != nil {
			return messaging.View{}, err
		}
		return messaging.ViewOf(m), nil
	}
	cur, err := s.messaging.Message(ctx, id, callerID)
	if err != nil {
		return messaging.View{}, err
	}
	if cur.SenderID != callerID {
		return messaging.View{}, apperr.Forbiddenf("not_sender", "only the sender of a message may edit or delete it")
	}
	sc, err := s.moderation.Screen(ctx, callerID, moderation.TargetMessage, id, moderation.ContextMessage, map[string]string{"body": body})
	if err != nil {
		return messaging.View{}, err
	}
	if sc.Held() && !cur.Deleted() {
		if _, err := sc.Hold(ctx, id, map[string]string{"conversation_id": cur.ConversationID, "message_id": id}); err != nil {
			return messaging.View{}, err
		}
		v := messaging.ViewOf(cur)
		v.Status, v.Moderation = "held", &sc.Result
		return v, nil
	}
	m, err := s.messaging.Edit(ctx, id, callerID, body)
	if err != nil {
		return messaging.View{}, err
	}
	if err := sc.Record(ctx, m.ID); err != nil {
		return messaging.View{}, err
	}
	// The mark follows the text: an edit that is fine clears it.
	var mark *moderation.Result
	if sc.Result.Decision != moderation.Allow {
		mark = &sc.Result
	}
	if err := s.moderation.MarkMessage(ctx, m.ID, mark); err != nil {
		return messaging.View{}, err
	}
	return withModeration(messaging.ViewOf(m), sc), nil
}

func withModeration(v messaging.View, sc *moderation.Screening) messaging.View {
	if sc.Result.Decision != moderation.Allow {
		r := sc.Result
		v.Moderation = &r
	}
	return v
}

// suspended reports whether the caller's account is suspended now.
func (s *server) suspended(p *auth.Principal) bool {
	return s.moderation != nil && p.Suspension.ActiveAt(s.moderation.Now())
}
