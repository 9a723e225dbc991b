package moderation

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/ids"
)

// Screening is the engine's answer for the texts of one write, before the
// write: Result is the worst of the fields' answers.
type Screening struct {
	svc      *Service
	authorID string
	typ      string
	texts    map[string]string
	Result   Result
	Field    string // the field whose answer is Result
}

// Screen checks the free texts of a write by authorID (field -> text;
// empty texts are skipped) before it happens. A block is refused at once,
// 422 content_blocked with the reason and the flagged categories, and
// recorded; otherwise the write goes on and calls Record with the target's
// id once it is saved. typ is the target type the texts belong to.
//
// targetID is the target being changed, or "" when it is being created.
func (s *Service) Screen(ctx context.Context, authorID, typ, targetID string, c Context, texts map[string]string) (*Screening, error) {
	sc := &Screening{svc: s, authorID: authorID, typ: typ, texts: map[string]string{}, Result: Result{Decision: Allow}}
	fields := make([]string, 0, len(texts))
	for f, t := range texts {
		if strings.TrimSpace(t) != "" {
			fields = append(fields, f)
			sc.texts[f] = t
		}
	}
	sort.Strings(fields)
	for _, f := range fields {
		r := s.engine.Check(sc.texts[f], c)
		if sc.Field == "" || r.Decision.rank() > sc.Result.Decision.rank() {
			sc.Result, sc.Field = r, f
		}
	}
	if sc.Result.Decision == Block {
		if err := sc.Record(ctx, targetID); err != nil {
			return nil, err
		}
		return nil, BlockedErr(sc.Field, sc.Result)
	}
	return sc, nil
}

// BlockedErr is the 422 answer to a blocked text.
func BlockedErr(field string, r Result) *apperr.Error {
	flagged := make([]string, len(r.Flagged))
	for i, c := range r.Flagged {
		flagged[i] = string(c)
	}
	return &apperr.Error{Kind: apperr.Invalid, Code: "content_blocked", Param: field, Flagged: flagged,
		Message: "This text was not accepted: " + r.Reason}
}

// Record writes the engine's decision about the saved target (allow writes
// nothing) with the engine's version, and queues a case when it needs a
// person: review, or self-harm, which is delivered and looked at.
func (sc *Screening) Record(ctx context.Context, targetID string) error {
	if sc == nil || sc.Result.Decision == Allow {
		return nil
	}
	s := sc.svc
	now := s.clock.Now()
	cats := make([]string, len(sc.Result.Flagged))
	for i, c := range sc.Result.Flagged {
		cats[i] = string(c)
	}
	f := &Flag{Record: &Record{
		ID: ids.New(ids.ModerationDecision), TargetType: sc.typ, TargetID: targetID, SubjectID: sc.authorID,
		Automated: true, Action: string(sc.Result.Decision), Reason: sc.Result.Reason, Categories: cats,
		EngineVersion: s.engine.Version(), CreatedAt: now,
	}}
	if targetID != "" && (sc.Result.Decision == Review || slices.Contains(sc.Result.Flagged, SelfHarm)) {
		risk := 0.0
		for _, c := range sc.Result.Flagged {
			risk = max(risk, sc.Result.Categories[c])
		}
		f.Case = &Case{
			ID: ids.New(ids.Case), Kind: KindContent, TargetType: sc.typ, TargetID: targetID, SubjectID: sc.authorID,
			Status: CaseOpen, Reasons: cats, RiskScore: risk, Evidence: sc.texts, Automated: true, CreatedAt: now, UpdatedAt: now,
		}
		f.Record.CaseID = f.Case.ID
	}
	return s.store.RecordFlag(ctx, f)
}

// Check is the engine's answer to a text, for POST /v1/moderation/check.
func (s *Service) Check(text string, c Context) Result { return s.engine.Check(text, c) }

// Held reports whether the screened text is held for a person before it
// goes out: review, except self-harm, which is delivered (the sender gets
// the support resources) and looked at.
func (sc *Screening) Held() bool {
	return sc != nil && sc.Result.Decision == Review && !slices.Contains(sc.Result.Flagged, SelfHarm)
}

// Hold keeps a text that is not delivered yet (Held) in its case, with what
// delivering it later needs (extra: e.g. the conversation), and records the
// engine's decision. heldID names the held content to its author; release
// delivers it through the target's Release.
func (sc *Screening) Hold(ctx context.Context, heldID string, extra map[string]string) (string, error) {
	s := sc.svc
	now := s.clock.Now()
	cats := make([]string, len(sc.Result.Flagged))
	risk := 0.0
	for i, c := range sc.Result.Flagged {
		cats[i] = string(c)
		risk = max(risk, sc.Result.Categories[c])
	}
	evidence := map[string]string{}
	for k, v := range sc.texts {
		evidence[k] = v
	}
	for k, v := range extra {
		evidence[k] = v
	}
	f := &Flag{
		Record: &Record{
			ID: ids.New(ids.ModerationDecision), TargetType: sc.typ, TargetID: heldID, SubjectID: sc.authorID,
			Automated: true, Action: string(sc.Result.Decision), Reason: sc.Result.Reason, Categories: cats,
			EngineVersion: s.engine.Version(), CreatedAt: now,
		},
		Case: &Case{
			ID: ids.New(ids.Case), Kind: KindContent, TargetType: sc.typ, TargetID: heldID, SubjectID: sc.authorID,
			Status: CaseOpen, Reasons: cats, RiskScore: risk, Evidence: evidence, Held: true, Automated: true,
			CreatedAt: now, UpdatedAt: now,
		},
	}
	f.Record.CaseID = f.Case.ID
	if err := s.store.RecordFlag(ctx, f); err != nil {
		return "", err
	}
	return f.Record.CaseID, nil
}

// MarkMessage marks a delivered message with the engine's answer (warn,
// or self-harm delivered) so the recipient's app can ask "does this bother
// you?"; nil clears the mark.
func (s *Service) MarkMessage(ctx context.Context, id string, r *Result) error {
	mark := ""
	if r != nil {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		mark = string(b)
	}
	return s.store.MarkMessage(ctx, id, mark)
}
