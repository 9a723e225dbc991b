package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/moderation"
	"github.com/matchpoint-api/matchpoint/internal/notify"
)

// Moderation implements moderation.Store.
type Moderation struct{ db *DB }

// NewModeration returns the moderation store over db.
func NewModeration(db *DB) *Moderation { return &Moderation{db: db} }

var _ moderation.Store = (*Moderation)(nil)

func init() {
	// Cases, reports and decisions are the record of what was decided and
	// why; an erased account's texts in them go, the ids (of an anonymised
	// account) stay so the record still adds up.
	blankCases := `UPDATE moderation_cases SET evidence = '{}', details = '' WHERE subject_id = $1`
	registerEraser("moderation_cases", []string{"subject_id"}, func(ctx context.Context, tx *sql.Tx, e erasure) error {
		_, err := tx.ExecContext(ctx, blankCases, e.UserID)
		return err
	})
	keepColumn("moderation_cases", "operator_id", "the operator who decided what an appeal contests; the account row is anonymised")
	registerEraser("moderation_reports", []string{"subject_id", "reporter_id"}, func(ctx context.Context, tx *sql.Tx, e erasure) error {
		if _, err := tx.ExecContext(ctx, `UPDATE moderation_reports SET evidence = '{}', details = '' WHERE subject_id = $1`, e.UserID); err != nil {
			return err
		}
		// A reporter's own words go; the report still counts.
		_, err := tx.ExecContext(ctx, `UPDATE moderation_reports SET details = '' WHERE reporter_id = $1`, e.UserID)
		return err
	})
	keepColumn("moderation_decisions", "subject_id", "the audit log of decisions holds no text of the account")
	keepColumn("moderation_decisions", "actor_id", "the operator who decided; the audit log holds no text of the account")
	deleteRowsOf("moderation_risk", "user_id")
}

const caseColumns = `c.id, c.kind, c.target_type, c.target_id, c.subject_id, c.status, c.reasons, c.report_count, c.risk_score,
	c.evidence, c.held, c.automated, COALESCE(c.decision_id, ''), COALESCE(c.operator_id, ''), c.details, c.created_at, c.updated_at,
	c.closed_at, COALESCE(r.risk_score, 0)`

const caseFrom = ` FROM moderation_cases c LEFT JOIN moderation_risk r ON r.user_id = c.subject_id`

func scanCase(row scanner) (*moderation.Case, error) {
	var c moderation.Case
	var reasons, evidence string
	var created, updated int64
	var closed sql.NullInt64
	if err := row.Scan(&c.ID, &c.Kind, &c.TargetType, &c.TargetID, &c.SubjectID, &c.Status, &reasons, &c.ReportCount, &c.RiskScore,
		&evidence, &c.Held, &c.Automated, &c.DecisionID, &c.OperatorID, &c.Details, &created, &updated, &closed, &c.SubjectRisk); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(reasons), &c.Reasons); err != nil {
		return nil, fmt.Errorf("store: case %s reasons: %w", c.ID, err)
	}
	if err := json.Unmarshal([]byte(evidence), &c.Evidence); err != nil {
		return nil, fmt.Errorf("store: case %s evidence: %w", c.ID, err)
	}
	c.CreatedAt, c.UpdatedAt, c.ClosedAt = fromMicros(created), fromMicros(updated), fromNullMicros(closed)
	return &c, nil
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings and string slices always encode
	}
	return string(b)
}

// errCaseRace is an insert that lost to a concurrent one opening the same
// target's case; the transaction is run again and joins it.
var errCaseRace = errors.New("store: concurrent case")

// caseTx runs fn in a transaction, again if it lost a race to open a case.
func (s *Moderation) caseTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	for range 3 {
		err := s.db.Tx(ctx, fn)
		if !errors.Is(err, errCaseRace) {
			return err
		}
	}
	return fmt.Errorf("store: open case: %w", errCaseRace)
}

// lockCase locks the case row read with its user's risk (PostgreSQL
// refuses to lock the nullable side of the outer join).
func (s *Moderation) lockCase() string {
	if f := s.db.forUpdate(); f != "" {
		return f + " OF c"
	}
	return ""
}

type mergeMode int

const (
	accumulate mergeMode = iota // independent evidence: risks combine
	strongest                   // a recomputed figure: the larger stays
)

// joinCase adds c to the target's open content case, or opens it with c,
// and returns the case id.
func (s *Moderation) joinCase(ctx context.Context, tx *sql.Tx, c *moderation.Case, mode mergeMode) (string, error) {
	old, err := scanCase(tx.QueryRowContext(ctx, `SELECT `+caseColumns+caseFrom+`
		WHERE c.target_type = $1 AND c.target_id = $2 AND c.status = 'open' AND c.kind = 'content'`+s.lockCase(), c.TargetType, c.TargetID))
	if errors.Is(err, sql.ErrNoRows) {
		_, err := tx.ExecContext(ctx, `INSERT INTO moderation_cases (id, kind, target_type, target_id, subject_id, status, reasons,
			report_count, risk_score, evidence, held, automated, details, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, '', $13, $13)`,
			c.ID, c.Kind, c.TargetType, c.TargetID, c.SubjectID, c.Status, jsonText(c.Reasons), c.ReportCount, c.RiskScore,
			jsonText(c.Evidence), c.Held, c.Automated, micros(c.CreatedAt))
		if _, dup := uniqueViolation(err); dup {
			return "", errCaseRace
		}
		if err != nil {
			return "", fmt.Errorf("store: open case: %w", err)
		}
		return c.ID, nil
	}
	if err != nil {
		return "", fmt.Errorf("store: read case: %w", err)
	}
	reasons := old.Reasons
	for _, r := range c.Reasons {
		if !slices.Contains(reasons, r) {
			reasons = append(reasons, r)
		}
	}
	risk := moderation.AddRisk(old.RiskScore, c.RiskScore)
	if mode == strongest {
		risk = max(old.RiskScore, c.RiskScore)
	}
	evidence := old.Evidence
	if len(evidence) == 0 {
		evidence = c.Evidence
	}
	if _, err := tx.ExecContext(ctx, `UPDATE moderation_cases SET reasons = $2, report_count = report_count + $3, risk_score = $4,
		evidence = $5, held = $6, automated = $7, updated_at = $8 WHERE id = $1`,
		old.ID, jsonText(reasons), c.ReportCount, risk, jsonText(evidence), old.Held || c.Held, old.Automated || c.Automated,
		micros(c.UpdatedAt)); err != nil {
		return "", fmt.Errorf("store: update case: %w", err)
	}
	return old.ID, nil
}

func insertDecision(ctx context.Context, tx *sql.Tx, r *moderation.Record) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO moderation_decisions (id, case_id, target_type, target_id, subject_id, actor_id,
		automated, action, reason, categories, engine_version, ends_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		r.ID, nullString(r.CaseID), r.TargetType, r.TargetID, r.SubjectID, nullString(r.ActorID), r.Automated, r.Action,
		r.Reason, jsonText(orEmpty(r.Categories)), r.EngineVersion, nullMicros(r.EndsAt), micros(r.CreatedAt))
	if err != nil {
		return fmt.Errorf("store: record decision: %w", err)
	}
	return nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// RecordFlag records an engine decision, and joins or opens its case.
func (s *Moderation) RecordFlag(ctx context.Context, f *moderation.Flag) error {
	return s.caseTx(ctx, func(tx *sql.Tx) error {
		if f.Case != nil {
			id, err := s.joinCase(ctx, tx, f.Case, accumulate)
			if err != nil {
				return err
			}
			f.Record.CaseID = id
		}
		return insertDecision(ctx, tx, f.Record)
	})
}

// CreateReport files a report into the target's open case (opening it with
// fresh if there is none). One report per reporter and open case.
func (s *Moderation) CreateReport(ctx context.Context, r *moderation.Report, fresh *moderation.Case) (*moderation.Case, error) {
	var c *moderation.Case
	err := s.caseTx(ctx, func(tx *sql.Tx) error {
		id, err := s.joinCase(ctx, tx, fresh, accumulate)
		if err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM moderation_reports WHERE case_id = $1 AND reporter_id = $2`,
			id, r.ReporterID).Scan(&n); err != nil {
			return fmt.Errorf("store: read reports: %w", err)
		}
		if n > 0 {
			return apperr.Conflictf("already_reported", "target_id", "you already reported this; moderators have it")
		}
		r.CaseID = id
		if _, err := tx.ExecContext(ctx, `INSERT INTO moderation_reports (id, case_id, reporter_id, target_type, target_id, subject_id,
			reason, details, evidence, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			r.ID, id, r.ReporterID, r.TargetType, r.TargetID, r.SubjectID, r.Reason, r.Details, jsonText(r.Evidence), micros(r.CreatedAt)); err != nil {
			return fmt.Errorf("store: create report: %w", err)
		}
		c, err = scanCase(tx.QueryRowContext(ctx, `SELECT `+caseColumns+caseFrom+` WHERE c.id = $1`, id))
		return err
	})
	return c, err
}

// Case returns one case.
func (s *Moderation) Case(ctx context.Context, id string) (*moderation.Case, error) {
	c, err := scanCase(s.db.QueryRowContext(ctx, `SELECT `+caseColumns+caseFrom+` WHERE c.id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.NotFoundf("no case %q", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get case: %w", err)
	}
	return c, nil
}

// Cases pages through cases by risk, highest first, then age. The cursor is
// a case id: the page goes on after its place in that order.
func (s *Moderation) Cases(ctx context.Context, status, kind, after string, limit int) ([]*moderation.Case, error) {
	where, args := `($1 = '' OR c.status = $1) AND ($2 = '' OR c.kind = $2)`, []any{status, kind}
	if after != "" {
		var risk float64
		err := s.db.QueryRowContext(ctx, `SELECT risk_score FROM moderation_cases WHERE id = $1`, after).Scan(&risk)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, apperr.InvalidParam("cursor", "invalid_cursor", "cursor is not one this list returned")
		}
		if err != nil {
			return nil, fmt.Errorf("store: list cases: %w", err)
		}
		where += ` AND (c.risk_score < $3 OR (c.risk_score = $3 AND c.id > $4))`
		args = append(args, risk, after)
	}
	args = append(args, limit)
	rows, err := s.db.QueryContext(ctx, `SELECT `+caseColumns+caseFrom+` WHERE `+where+
		fmt.Sprintf(` ORDER BY c.risk_score DESC, c.id LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("store: list cases: %w", err)
	}
	defer rows.Close()
	var out []*moderation.Case
	for rows.Next() {
		c, err := scanCase(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list cases: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ReportsOf returns a case's reports, oldest first.
func (s *Moderation) ReportsOf(ctx context.Context, caseID string, limit int) ([]*moderation.Report, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, case_id, reporter_id, target_type, target_id, subject_id, reason, details, evidence, created_at
		FROM moderation_reports WHERE case_id = $1 ORDER BY id LIMIT $2`, caseID, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list reports: %w", err)
	}
	defer rows.Close()
	var out []*moderation.Report
	for rows.Next() {
		var r moderation.Report
		var evidence string
		var created int64
		if err := rows.Scan(&r.ID, &r.CaseID, &r.ReporterID, &r.TargetType, &r.TargetID, &r.SubjectID, &r.Reason, &r.Details, &evidence, &created); err != nil {
			return nil, fmt.Errorf("store: list reports: %w", err)
		}
		if err := json.Unmarshal([]byte(evidence), &r.Evidence); err != nil {
			return nil, fmt.Errorf("store: report %s evidence: %w", r.ID, err)
		}
		r.CreatedAt = fromMicros(created)
		out = append(out, &r)
	}
	return out, rows.Err()
}

const decisionColumns = `id, COALESCE(case_id, ''), target_type, target_id, subject_id, COALESCE(actor_id, ''), automated, action, reason,
	categories, engine_version, ends_at, created_at`

func scanDecision(row scanner) (*moderation.Record, error) {
	var r moderation.Record
	var cats string
	var ends sql.NullInt64
	var created int64
	if err := row.Scan(&r.ID, &r.CaseID, &r.TargetType, &r.TargetID, &r.SubjectID, &r.ActorID, &r.Automated, &r.Action, &r.Reason,
		&cats, &r.EngineVersion, &ends, &created); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(cats), &r.Categories); err != nil {
		return nil, fmt.Errorf("store: decision %s categories: %w", r.ID, err)
	}
	r.EndsAt, r.CreatedAt = fromNullMicros(ends), fromMicros(created)
	return &r, nil
}

// Decision returns one decision.
func (s *Moderation) Decision(ctx context.Context, id string) (*moderation.Record, error) {
	r, err := scanDecision(s.db.QueryRowContext(ctx, `SELECT `+decisionColumns+` FROM moderation_decisions WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.NotFoundf("no decision %q", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get decision: %w", err)
	}
	return r, nil
}

// Decisions pages through decisions, newest first, about one user or all.
func (s *Moderation) Decisions(ctx context.Context, subjectID, before string, limit int) ([]*moderation.Record, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+decisionColumns+` FROM moderation_decisions
		WHERE ($1 = '' OR subject_id = $1) AND ($2 = '' OR id < $2) ORDER BY id DESC LIMIT $3`, subjectID, before, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list decisions: %w", err)
	}
	defer rows.Close()
	var out []*moderation.Record
	for rows.Next() {
		r, err := scanDecision(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list decisions: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Decide writes an operator's decision: the case closes (once: a second
// decision is a conflict), the decision is recorded, a suspension is set or
// lifted, and the affected user is notified, together.
func (s *Moderation) Decide(ctx context.Context, o *moderation.Outcome) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		at := micros(o.Record.CreatedAt)
		res, err := tx.ExecContext(ctx, `UPDATE moderation_cases SET status = 'closed', closed_at = $2, updated_at = $2, held = $3
			WHERE id = $1 AND status = 'open'`, o.Case.ID, at, false)
		if err != nil {
			return fmt.Errorf("store: close case: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return apperr.Conflictf("case_closed", "", "the case was already decided")
		}
		if err := insertDecision(ctx, tx, o.Record); err != nil {
			return err
		}
		if o.Suspend != nil {
			if err := suspend(ctx, tx, o.Suspend); err != nil {
				return err
			}
		}
		if o.Lift != "" {
			if _, err := liftSuspension(ctx, tx, o.Lift, o.Record.CreatedAt); err != nil {
				return err
			}
		}
		return addNotification(ctx, tx, statementNotification(&o.Statement))
	})
}

// statementNotification is the statement of reasons as a notification.
func statementNotification(st *moderation.Statement) *notify.Notification {
	data := map[string]string{"decision_id": st.DecisionID, "action": st.Action, "automated_detection": fmt.Sprint(st.Automated)}
	if st.AppealBy != nil {
		data["appeal_until"] = st.AppealBy.UTC().Format(time.RFC3339)
	}
	return notify.New(st.At, st.UserID, notify.KindModerationDecision, st.Title, st.Body, data)
}

// suspend sets the suspension on the account and ends its browser
// sessions; keys and tokens are refused while it holds and work again after.
func suspend(ctx context.Context, tx *sql.Tx, sp *moderation.Suspension) error {
	res, err := tx.ExecContext(ctx, `UPDATE users SET suspended_at = $2, suspended_until = $3 WHERE id = $1 AND deleted_at IS NULL`,
		sp.UserID, micros(sp.Since), nullMicros(sp.Until))
	if err != nil {
		return fmt.Errorf("store: suspend: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return apperr.NotFoundf("no user %q", sp.UserID)
	}
	noteCredentials(tx)
	if _, err := tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE user_id = $1`, sp.UserID); err != nil {
		return fmt.Errorf("store: end sessions: %w", err)
	}
	return nil
}

func liftSuspension(ctx context.Context, tx *sql.Tx, userID string, at time.Time) (bool, error) {
	res, err := tx.ExecContext(ctx, `UPDATE users SET suspended_at = NULL, suspended_until = NULL
		WHERE id = $1 AND suspended_at IS NOT NULL AND (suspended_until IS NULL OR suspended_until > $2)`, userID, micros(at))
	if err != nil {
		return false, fmt.Errorf("store: lift suspension: %w", err)
	}
	n, _ := res.RowsAffected()
	if n > 0 {
		noteCredentials(tx)
	}
	return n > 0, nil
}

// Suspend suspends an account from the terminal, with its record.
func (s *Moderation) Suspend(ctx context.Context, sp *moderation.Suspension, r *moderation.Record) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := suspend(ctx, tx, sp); err != nil {
			return err
		}
		return insertDecision(ctx, tx, r)
	})
}

// Unsuspend lifts a suspension still in force, with its record.
func (s *Moderation) Unsuspend(ctx context.Context, userID string, r *moderation.Record) (bool, error) {
	var lifted bool
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		if lifted, err = liftSuspension(ctx, tx, userID, r.CreatedAt); err != nil || !lifted {
			return err
		}
		return insertDecision(ctx, tx, r)
	})
	return lifted, err
}

// CreateAppeal opens an appeal case; one per decision.
func (s *Moderation) CreateAppeal(ctx context.Context, c *moderation.Case) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO moderation_cases (id, kind, target_type, target_id, subject_id, status, reasons,
		report_count, risk_score, evidence, held, automated, decision_id, operator_id, details, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8, $9, $10, $11, $12, $13, $14, $15, $15)`,
		c.ID, c.Kind, c.TargetType, c.TargetID, c.SubjectID, c.Status, jsonText(c.Reasons), c.RiskScore, jsonText(c.Evidence),
		false, false, c.DecisionID, nullString(c.OperatorID), c.Details, micros(c.CreatedAt))
	if _, dup := uniqueViolation(err); dup {
		return apperr.Conflictf("already_appealed", "", "this decision was already appealed")
	}
	if err != nil {
		return fmt.Errorf("store: create appeal: %w", err)
	}
	return nil
}

// OpenSignalCase joins or opens the user's case for behaviour signals.
func (s *Moderation) OpenSignalCase(ctx context.Context, c *moderation.Case, since time.Time) error {
	return s.caseTx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM moderation_cases WHERE target_type = $1 AND target_id = $2
			AND status = 'closed' AND closed_at >= $3`, c.TargetType, c.TargetID, micros(since)).Scan(&n); err != nil {
			return fmt.Errorf("store: read cases: %w", err)
		}
		if n > 0 {
			return nil
		}
		_, err := s.joinCase(ctx, tx, c, strongest)
		return err
	})
}

// MarkMessage stores the engine's answer on a message (moderation column of
// messages, migration 00062).
func (s *Moderation) MarkMessage(ctx context.Context, id, mark string) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE messages SET moderation = $2 WHERE id = $1`, id, mark); err != nil {
		return fmt.Errorf("store: mark message: %w", err)
	}
	return nil
}
