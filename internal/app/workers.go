package app

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/config"
)

// Background work. Every node runs the same workers; what one of them does
// happens once across the nodes because each claims its work in the
// database (leases that expire when a node dies, or statements that only one
// node's transaction can win), so a node can stop or crash at any time.

// Default intervals of the periodic workers, when the configuration has none.
const (
	janitorEvery       = 10 * time.Minute // expired sessions, codes, tokens, idempotency keys, old outbox rows
	matchExpiryEvery   = time.Minute
	eventReminderEvery = time.Minute
)

// worker is one piece of background work: run returns once ctx has ended
// and the work in hand is finished or handed back.
type worker struct {
	name string
	run  func(ctx context.Context)
}

// workers lists the background work of a node. Adding a worker is one line
// here.
func (a *App) workers(cfg config.Config, log *slog.Logger) []worker {
	return []worker{
		{"janitor", func(ctx context.Context) { a.RunJanitor(ctx, janitorEvery, log) }},
		{"webhooks", a.RunWebhooks},
		{"match-expiry", func(ctx context.Context) {
			a.RunMatchExpiry(ctx, orDefault(cfg.MatchExpiryEvery, matchExpiryEvery), log)
		}},
		{"notifications", a.RunNotifications},
		{"event-reminders", func(ctx context.Context) {
			a.RunEventReminders(ctx, orDefault(cfg.EventReminderInterval, eventReminderEvery), log)
		}},
		{"analytics", func(ctx context.Context) { a.RunAnalytics(ctx, log) }},
		{"moderation-signals", func(ctx context.Context) { a.RunModerationSignals(ctx, log) }},
	}
}

// Run runs every background worker until ctx ends, and returns when all of
// them have finished the work in hand and handed their leases back.
func (a *App) Run(ctx context.Context) {
	log := a.log.With("component", "workers")
	ws := a.workers(a.cfg, a.log)
	names := make([]string, len(ws))
	var wg sync.WaitGroup
	for i, w := range ws {
		names[i] = w.name
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(ctx)
			log.Debug("worker stopped", "worker", w.name)
		}()
	}
	log.Info("background workers started", "workers", names)
	wg.Wait()
	log.Info("background workers stopped")
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
