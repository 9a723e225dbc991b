package app

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/matchpoint-api/matchpoint/internal/analytics"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/httpapi"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/web"
)

// assembleAnalytics sets up request counting and the analytics reports.
func assembleAnalytics(a *App, db *store.DB, cfg config.Config, opts Options, pages *web.Pages) error {
	clk := opts.Clock
	st := store.NewAnalytics(db)
	a.Requests = analytics.NewRecorder(st, clk, opts.Logger)
	a.Analytics = analytics.NewService(st, clk)
	a.analyticsFlush = cfg.AnalyticsFlushInterval
	if a.analyticsFlush <= 0 {
		a.analyticsFlush = config.DefaultAnalyticsFlushInterval
	}
	keep := cfg.AnalyticsRetention
	if keep <= 0 {
		keep = config.DefaultAnalyticsRetention
	}
	a.analyticsRetained = analytics.Retention{Hourly: keep, Daily: keep}
	return pages.SetDashboard(web.Dashboard{Keys: a.Keys, Webhooks: a.Webhooks, Analytics: a.Analytics, Clock: clk})
}

// RunAnalytics adds the requests this node counted to the database every
// flush interval, and deletes rollups past their retention every hour,
// until ctx ends; then it flushes once more. Every node runs it.
func (a *App) RunAnalytics(ctx context.Context, log *slog.Logger) {
	done := make(chan struct{})
	go func() { defer close(done); a.Requests.Run(ctx, a.analyticsFlush) }()
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if _, err := a.Analytics.Purge(ctx, a.analyticsRetained); err != nil && ctx.Err() == nil {
			log.Warn("purge request analytics", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			<-done
			return
		case <-t.C:
		}
	}
}

// HandlerWithoutCounting serves what Handler serves, with the same services
// and database, without request analytics: the baseline of the analytics
// benchmark. Its metrics go to a registry of their own.
func (a *App) HandlerWithoutCounting() http.Handler {
	d := a.deps
	d.Requests, d.Registry = nil, prometheus.NewRegistry()
	return httpapi.New(d)
}
