package moderation

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/ids"
)

// NewDecision is an operator's decision on a case.
type NewDecision struct {
	Action        string
	Reason        string
	DurationHours *int // suspend_user: nil until lifted
}

// MaxSuspensionHours bounds a suspension with an end (ten years).
const MaxSuspensionHours = 87600

// Decide applies an operator's decision to an open case: the action takes
// effect at once, the case closes, and the affected user is sent a
// statement of reasons. An operator never decides a case about themselves,
// nor the appeal of their own decision.
func (s *Service) Decide(ctx context.Context, operatorID, caseID string, in NewDecision) (*Record, *Case, error) {
	if !slices.Contains(Actions, in.Action) {
		return nil, nil, apperr.InvalidParam("action", "validation_failed", "action must be one of %s", strings.Join(Actions, ", "))
	}
	in.Reason = strings.TrimSpace(in.Reason)
	if in.Reason == "" || utf8.RuneCountInString(in.Reason) > MaxText {
		return nil, nil, apperr.InvalidParam("reason", "validation_failed", "reason is required (at most %d characters): the affected user is told why", MaxText)
	}
	if in.DurationHours != nil && (in.Action != ActionSuspendUser || *in.DurationHours < 1 || *in.DurationHours > MaxSuspensionHours) {
		return nil, nil, apperr.InvalidParam("duration_hours", "validation_failed", "duration_hours goes with suspend_user only, from 1 to %d", MaxSuspensionHours)
	}
	c, _, err := s.Case(ctx, caseID)
	if err != nil {
		return nil, nil, err
	}
	if c.Status != CaseOpen {
		return nil, nil, apperr.Conflictf("case_closed", "", "the case was already decided")
	}
	if c.SubjectID == operatorID {
		return nil, nil, apperr.Forbiddenf("forbidden", "an operator may not decide a case about themselves")
	}
	now := s.clock.Now()
	rec := &Record{
		ID: ids.New(ids.ModerationDecision), CaseID: c.ID, TargetType: c.TargetType, TargetID: c.TargetID,
		SubjectID: c.SubjectID, ActorID: operatorID, Action: in.Action, Reason: in.Reason, Categories: c.Reasons, CreatedAt: now,
	}
	o := &Outcome{Case: c, Record: rec}
	if c.Kind == KindAppeal {
		if err := s.appealOutcome(ctx, operatorID, c, o); err != nil {
			return nil, nil, err
		}
	} else if err := s.contentOutcome(ctx, c, in, o, now); err != nil {
		return nil, nil, err
	}
	o.Statement = statement(c, rec, c.Automated, now)
	if err := s.store.Decide(ctx, o); err != nil {
		return nil, nil, err
	}
	if o.Suspend != nil && s.release != nil {
		// The suspension already holds; giving up places is bookkeeping that
		// a failure must not undo.
		if err := s.release(ctx, o.Suspend.UserID); err != nil {
			s.log.WarnContext(ctx, "release a suspended user's requests and places", "user_id", o.Suspend.UserID, "error", err.Error())
		}
	}
	c.Status, c.ClosedAt = CaseClosed, &now
	return rec, c, nil
}

// contentOutcome carries out a decision on reports or engine flags.
func (s *Service) contentOutcome(ctx context.Context, c *Case, in NewDecision, o *Outcome, now time.Time) error {
	t, known := s.targets[c.TargetType]
	content := &Content{Type: c.TargetType, ID: c.TargetID, AuthorID: c.SubjectID, Texts: c.Evidence}
	switch in.Action {
	case ActionRemoveContent:
		if !known || t.Remove == nil {
			return apperr.InvalidParam("action", "validation_failed", "%s content cannot be removed", c.TargetType)
		}
		if err := t.Remove(ctx, content, in.Reason); err != nil && !apperr.IsKind(err, apperr.NotFound) {
			return err
		}
	case ActionRelease, ActionDismiss:
		// Nothing was wrong, or not enough: held content goes out.
		if c.Held && known && t.Release != nil {
			if err := t.Release(ctx, content); err != nil && !apperr.IsKind(err, apperr.NotFound) {
				return err
			}
		}
	case ActionSuspendUser:
		sp := &Suspension{UserID: c.SubjectID, Since: now}
		if in.DurationHours != nil {
			end := now.Add(time.Duration(*in.DurationHours) * time.Hour)
			sp.Until, o.Record.EndsAt = &end, &end
		}
		o.Suspend = sp
	}
	return nil
}

// appealOutcome: an appeal is resolved by a person other than the one who
// decided (DSA Art. 20). dismiss upholds the decision; release reverses it
// as far as it can be: a suspension is lifted, held content goes out.
func (s *Service) appealOutcome(ctx context.Context, operatorID string, c *Case, o *Outcome) error {
	if c.OperatorID != "" && c.OperatorID == operatorID {
		return apperr.Forbiddenf("same_operator", "an appeal is resolved by another operator than the one who decided")
	}
	switch o.Record.Action {
	case ActionDismiss:
		return nil
	case ActionRelease:
	default:
		return apperr.InvalidParam("action", "validation_failed", "an appeal is answered with dismiss (the decision stands) or release (it is reversed)")
	}
	orig, err := s.store.Decision(ctx, c.DecisionID)
	if err != nil {
		return err
	}
	o.Reinstated = orig
	if orig.Action == ActionSuspendUser {
		o.Lift = orig.SubjectID
	}
	return nil
}

var actionWords = map[string]string{
	ActionDismiss:       "No action was taken against you",
	ActionRemoveContent: "Your content was removed",
	ActionRelease:       "Your content was released and is visible again",
	ActionWarnUser:      "You received a warning",
	ActionSuspendUser:   "Your account was suspended",
}

var targetWords = map[string]string{TargetUser: "your profile", TargetMessage: "your message", TargetEvent: "your event"}

// statement writes the statement of reasons (EU DSA Art. 17).
func statement(c *Case, r *Record, automated bool, now time.Time) Statement {
	st := Statement{UserID: c.SubjectID, DecisionID: r.ID, Action: r.Action, Automated: automated, At: now}
	what := actionWords[r.Action]
	if c.Kind == KindAppeal {
		what = "Your appeal was rejected: the decision stands"
		if r.Action == ActionRelease {
			what = "Your appeal was upheld: the decision is reversed"
		}
	} else if r.Action == ActionSuspendUser && r.EndsAt != nil {
		what += " until " + r.EndsAt.UTC().Format(time.RFC3339)
	}
	means := "A person decided after reports by other users; no automated means were used to decide."
	if automated {
		means = "Our automated detection flagged it; a person reviewed it and decided."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Decision about %s: %s.\nWhy: %s\n%s", targetWords[c.TargetType], what, r.Reason, means)
	if c.Kind != KindAppeal && r.Action != ActionDismiss && r.Action != ActionRelease {
		by := now.AddDate(0, AppealWindow, 0)
		st.AppealBy = &by
		fmt.Fprintf(&b, "\nYou may appeal until %s: POST /v1/moderation/decisions/%s/appeal.", by.UTC().Format(time.RFC3339), r.ID)
	}
	st.Title, st.Body = "Moderation decision: "+strings.ReplaceAll(r.Action, "_", " "), b.String()
	return st
}

// appealable actions: what someone can contest. The engine's review is
// not among them: a person decides next, and that decision is.
var appealable = []string{ActionRemoveContent, ActionWarnUser, ActionSuspendUser, string(Block)}

// Appeal opens an appeal case against a decision about userID, within six
// months of it. Only another operator than the one who decided may resolve it.
func (s *Service) Appeal(ctx context.Context, userID, decisionID, details string) (*Case, error) {
	details = strings.TrimSpace(details)
	if details == "" || utf8.RuneCountInString(details) > MaxText {
		return nil, apperr.InvalidParam("details", "validation_failed", "details is required (at most %d characters)", MaxText)
	}
	if !ids.Valid(ids.ModerationDecision, decisionID) {
		return nil, apperr.NotFoundf("no decision %q", decisionID)
	}
	d, err := s.store.Decision(ctx, decisionID)
	if err != nil {
		return nil, err
	}
	if d.SubjectID != userID {
		return nil, apperr.NotFoundf("no decision %q", decisionID)
	}
	if !slices.Contains(appealable, d.Action) {
		return nil, apperr.Conflictf("not_appealable", "", "a %s decision takes nothing from you and cannot be appealed", d.Action)
	}
	now := s.clock.Now()
	if !now.Before(d.CreatedAt.AddDate(0, AppealWindow, 0)) {
		return nil, apperr.Conflictf("appeal_window_closed", "", "a decision may be appealed within %d months", AppealWindow)
	}
	evidence := map[string]string{}
	risk := 0.5
	if d.CaseID != "" {
		if orig, err := s.store.Case(ctx, d.CaseID); err == nil {
			evidence, risk = orig.Evidence, max(risk, orig.RiskScore)
		} else if !apperr.IsKind(err, apperr.NotFound) {
			return nil, err
		}
	}
	c := &Case{
		ID: ids.New(ids.Case), Kind: KindAppeal, TargetType: d.TargetType, TargetID: d.TargetID, SubjectID: userID,
		Status: CaseOpen, Reasons: append([]string{"appeal"}, d.Categories...), RiskScore: risk, Evidence: evidence,
		DecisionID: d.ID, OperatorID: d.ActorID, Details: details, CreatedAt: now, UpdatedAt: now,
	}
	if err := s.store.CreateAppeal(ctx, c); err != nil {
		return nil, err
	}
	return c, nil
}

// MyDecisions lists the decisions about userID, newest first, so that they
// can be read and appealed.
func (s *Service) MyDecisions(ctx context.Context, userID, before string, limit int) ([]*Record, error) {
	return s.store.Decisions(ctx, userID, before, limit)
}

// Suspend suspends a user from the terminal (matchpoint admin suspend-user);
// until nil lasts until lifted.
func (s *Service) Suspend(ctx context.Context, userID string, until *time.Time, reason string) (*Record, error) {
	now := s.clock.Now()
	if until != nil && !until.After(now) {
		return nil, apperr.InvalidParam("until", "validation_failed", "the end of a suspension must be in the future")
	}
	rec := &Record{ID: ids.New(ids.ModerationDecision), TargetType: TargetUser, TargetID: userID, SubjectID: userID,
		Action: ActionSuspendUser, Reason: reason, EndsAt: until, CreatedAt: now}
	if err := s.store.Suspend(ctx, &Suspension{UserID: userID, Since: now, Until: until}, rec); err != nil {
		return nil, err
	}
	if s.release != nil {
		if err := s.release(ctx, userID); err != nil {
			s.log.WarnContext(ctx, "release a suspended user's requests and places", "user_id", userID, "error", err.Error())
		}
	}
	return rec, nil
}

// Unsuspend lifts a user's suspension; false if there was none.
func (s *Service) Unsuspend(ctx context.Context, userID, reason string) (bool, error) {
	rec := &Record{ID: ids.New(ids.ModerationDecision), TargetType: TargetUser, TargetID: userID, SubjectID: userID,
		Action: "unsuspend_user", Reason: reason, CreatedAt: s.clock.Now()}
	return s.store.Unsuspend(ctx, userID, rec)
}
