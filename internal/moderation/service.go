package moderation

import (
	"context"
	"log/slog"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clock"
)

// Service is the safety side: screening writes, reports, the review queue,
// decisions, appeals, suspensions and behaviour signals.
type Service struct {
	store   Store
	engine  *Engine
	clock   clock.Clock
	log     *slog.Logger
	targets map[string]Target
	cfg     Settings

	// block makes one user block another (reporting with "block": true).
	block func(ctx context.Context, blocker, blocked string) error
	// release gives up a suspended user's pending match requests and event
	// places.
	release func(ctx context.Context, userID string) error
}

// Settings are the behaviour signals' thresholds (documented in the README).
type Settings struct {
	SignalInterval  time.Duration // how often signals are recomputed
	SignalWindow    time.Duration // how far back they count
	NewAccountAge   time.Duration // an account younger than this is new
	ReportsAgainst  int           // distinct reporters of one user
	BlocksAgainst   int           // people blocking one user
	NewAccountLinks int           // texts with links by a new account
	Fanout          int           // people messaged without a match or shared conversation
	SameText        int           // people sent the same text
	CaseRisk        float64       // a user's risk from which a case opens
}

// DefaultSettings are the thresholds used unless configured.
var DefaultSettings = Settings{
	SignalInterval: time.Minute, SignalWindow: 24 * time.Hour, NewAccountAge: 7 * 24 * time.Hour,
	ReportsAgainst: 3, BlocksAgainst: 5, NewAccountLinks: 3, Fanout: 20, SameText: 10, CaseRisk: 0.6,
}

// NewService returns the safety service over st.
func NewService(st Store, clk clock.Clock, cfg Settings, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	d := DefaultSettings
	if cfg.SignalInterval <= 0 {
		cfg.SignalInterval = d.SignalInterval
	}
	if cfg.SignalWindow <= 0 {
		cfg.SignalWindow = d.SignalWindow
	}
	if cfg.NewAccountAge <= 0 {
		cfg.NewAccountAge = d.NewAccountAge
	}
	for _, p := range []struct{ v, d *int }{{&cfg.ReportsAgainst, &d.ReportsAgainst}, {&cfg.BlocksAgainst, &d.BlocksAgainst},
		{&cfg.NewAccountLinks, &d.NewAccountLinks}, {&cfg.Fanout, &d.Fanout}, {&cfg.SameText, &d.SameText}} {
		if *p.v <= 0 {
			*p.v = *p.d
		}
	}
	if cfg.CaseRisk <= 0 || cfg.CaseRisk > 1 {
		cfg.CaseRisk = d.CaseRisk
	}
	return &Service{store: st, engine: Default(), clock: clk, log: log, targets: map[string]Target{}, cfg: cfg}
}

// Settings returns the thresholds in use.
func (s *Service) Settings() Settings { return s.cfg }

// Engine returns the text engine.
func (s *Service) Engine() *Engine { return s.engine }

// Now is the service's clock.
func (s *Service) Now() time.Time { return s.clock.Now() }

// SetTarget registers what the domain owning a target type lends moderation.
func (s *Service) SetTarget(typ string, t Target) { s.targets[typ] = t }

// SetBlocker sets how a reporter blocks whom they report.
func (s *Service) SetBlocker(fn func(ctx context.Context, blocker, blocked string) error) {
	s.block = fn
}

// SetReleaser sets how a suspended user's pending requests and places are released.
func (s *Service) SetReleaser(fn func(ctx context.Context, userID string) error) { s.release = fn }
