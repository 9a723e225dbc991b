package moderation

import (
	"context"
	"time"
)

// This file and the ones beside it (screen.go, reports.go, queue.go,
// decisions.go, signals.go) are the safety side of the package: where the
// engine's answers become records, cases, decisions and suspensions. They
// live with the engine because every caller goes through both: one package
// is one domain, the text check and what follows from it.

// Target types: what a report or a case is about.
const (
	TargetUser    = "user"
	TargetMessage = "message"
	TargetEvent   = "event"
)

// TargetTypes lists them in the API's order.
var TargetTypes = []string{TargetUser, TargetMessage, TargetEvent}

// Report reasons, fixed by the API.
var ReportReasons = []string{"harassment", "hate", "threat", "self_harm", "sexual", "spam", "scam", "fake_profile", "underage", "other"}

// Case kinds and statuses.
const (
	KindContent = "content" // reports and engine flags about one target
	KindAppeal  = "appeal"  // the affected user contests a decision

	CaseOpen   = "open"
	CaseClosed = "closed"
)

// Decision actions of an operator; the engine's own decisions are recorded
// with its Decision (warn, review, block) as the action.
const (
	ActionDismiss       = "dismiss"
	ActionRemoveContent = "remove_content"
	ActionRelease       = "release"
	ActionWarnUser      = "warn_user"
	ActionSuspendUser   = "suspend_user"
)

// Actions lists the operator's actions in the API's order.
var Actions = []string{ActionDismiss, ActionRemoveContent, ActionRelease, ActionWarnUser, ActionSuspendUser}

// AppealWindow is how long after a decision the affected user may appeal it.
const AppealWindow = 6 // months

// MaxText bounds reasons, details and appeal texts.
const MaxText = 2000

// Case is one entry of the review queue.
type Case struct {
	ID          string
	Kind        string
	TargetType  string
	TargetID    string
	SubjectID   string // the user the case is about: the author, or the reported user
	Status      string
	Reasons     []string // report reasons and flagged categories, merged
	ReportCount int
	RiskScore   float64
	Evidence    map[string]string // the texts as they were when flagged or first reported
	Held        bool              // the content is held until a decision
	Automated   bool              // automated means (the engine, behaviour signals) flagged it
	DecisionID  string            // appeal: the decision contested
	OperatorID  string            // appeal: who decided it, who may not resolve the appeal
	Details     string            // appeal: what the user says
	CreatedAt   time.Time
	UpdatedAt   time.Time
	ClosedAt    *time.Time
	// SubjectRisk is the subject's behaviour risk score (signals.go), read with the case.
	SubjectRisk float64
}

// Report is one user's report.
type Report struct {
	ID         string
	CaseID     string
	ReporterID string
	TargetType string
	TargetID   string
	SubjectID  string
	Reason     string
	Details    string
	Evidence   map[string]string
	CreatedAt  time.Time
}

// Record is one decision in the audit log: by the engine (ActorID empty,
// Automated) or by an operator.
type Record struct {
	ID            string
	CaseID        string
	TargetType    string
	TargetID      string
	SubjectID     string
	ActorID       string
	Automated     bool
	Action        string
	Reason        string
	Categories    []string
	EngineVersion string
	EndsAt        *time.Time // suspend_user with a duration
	CreatedAt     time.Time
}

// Content is a reportable thing as its reader sees it.
type Content struct {
	Type     string
	ID       string
	AuthorID string
	Texts    map[string]string
}

// Target is what the domain that owns a target type lends moderation.
type Target struct {
	// Read returns the target as viewerID may see it; a not-found error
	// when they may not, as reading it through the API would.
	Read func(ctx context.Context, viewerID, id string) (*Content, error)
	// Remove takes the content down (remove_content).
	Remove func(ctx context.Context, c *Content, reason string) error
	// Release shows held content (release); nil when nothing is ever held.
	Release func(ctx context.Context, c *Content) error
}

// Flag is an engine decision to record, and the case it opens when it
// needs a person.
type Flag struct {
	Record *Record
	Case   *Case // nil: recorded only (warn, block)
}

// Suspension is a suspension to apply in a decision's transaction.
type Suspension struct {
	UserID string
	Since  time.Time
	Until  *time.Time
}

// Outcome is an operator's decision with everything it writes together.
type Outcome struct {
	Case       *Case
	Record     *Record
	Suspend    *Suspension // suspend_user
	Lift       string      // an upheld appeal of a suspension: the user to lift it for
	Statement  Statement   // the notification to the affected user
	Reinstated *Record     // an upheld appeal: the decision reversed
}

// Statement is the statement of reasons sent to the affected user (EU DSA
// Art. 17): what was decided, why, whether automated means were involved,
// and how to appeal.
type Statement struct {
	UserID     string
	Title      string
	Body       string
	DecisionID string
	Action     string
	Automated  bool
	AppealBy   *time.Time
	At         time.Time
}

// Signals are one user's behaviour counts over the window (signals.go).
type Signals struct {
	UserID         string         `json:"-"`
	Counts         map[string]int `json:"counts"`
	RiskScore      float64        `json:"risk_score"`
	AccountCreated time.Time      `json:"-"`
}

// Store is the persistence of the safety side.
type Store interface {
	RecordFlag(ctx context.Context, f *Flag) error
	CreateReport(ctx context.Context, r *Report, c *Case) (*Case, error)
	Case(ctx context.Context, id string) (*Case, error)
	Cases(ctx context.Context, status, kind, after string, limit int) ([]*Case, error)
	ReportsOf(ctx context.Context, caseID string, limit int) ([]*Report, error)
	Decide(ctx context.Context, o *Outcome) error
	Decision(ctx context.Context, id string) (*Record, error)
	Decisions(ctx context.Context, subjectID, after string, limit int) ([]*Record, error)
	CreateAppeal(ctx context.Context, c *Case) error
	Suspend(ctx context.Context, s *Suspension, r *Record) error
	Unsuspend(ctx context.Context, userID string, r *Record) (bool, error)
	// Signals counts every behaviour signal since the window's start for the
	// users who have any, and saves each user's risk.
	Signals(ctx context.Context, since time.Time, newAccountSince time.Time) ([]*Signals, error)
	SaveRisk(ctx context.Context, s []*Signals, at time.Time) error
	// OpenSignalCase joins or opens the user's case, unless a person
	// closed a case about the user since since (what they saw then stands
	// until the signals that made it leave the window).
	OpenSignalCase(ctx context.Context, c *Case, since time.Time) error
	// MarkMessage stores the engine's answer on a delivered message (JSON;
	// "" clears it) for its readers' apps.
	MarkMessage(ctx context.Context, id, mark string) error
}
