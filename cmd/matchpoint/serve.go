package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/geo"
)

// shutdownGrace is how long in-flight requests get to finish on SIGTERM.
const shutdownGrace = 30 * time.Second

// janitorEvery is how often expired sessions, codes, tokens and idempotency
// keys are deleted.
const janitorEvery = 10 * time.Minute

const serveUsage = `usage: matchpoint serve [flags]

Run the HTTP service: the /v1 API, the OAuth endpoints, the sign-in pages and
the documentation. The database schema is brought up to date first.
`

// matchExpiryEvery is how often pending match requests past their time
// expire, unless configured.
const matchExpiryEvery = time.Minute

func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	start := time.Now()
	fs := newFlagSet("serve", serveUsage)
	cfg := config.Register(fs, getenv)
	if _, err := parseArgs(fs, args, 0, stdout, stderr); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	// What logs without a request at hand (background work, security events
	// of services called outside a request) uses the same logger.
	slog.SetDefault(log)

	// Listen first: the base URL follows the address when none is given,
	// and the port of address :0 is known only now.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	cfg.Listening(ln.Addr())
	a, err := app.Open(ctx, *cfg, app.Options{Logger: log})
	if err != nil {
		return err
	}
	defer a.Close()

	srv := &http.Server{
		Handler:           a.Handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	jctx, stopJanitor := context.WithCancel(context.Background())
	defer stopJanitor()
	go a.RunJanitor(jctx, janitorEvery, log)
	wctx, stopWebhooks := context.WithCancel(context.Background())
	webhooksDone := make(chan struct{})
	go func() { a.RunWebhooks(wctx); close(webhooksDone) }()
	defer func() { stopWebhooks(); <-webhooksDone }()
	// Request analytics: the last counts are flushed after the last request.
	actx, stopAnalytics := context.WithCancel(context.Background())
	analyticsDone := make(chan struct{})
	go func() { defer close(analyticsDone); a.RunAnalytics(actx, log) }()
	defer func() { stopAnalytics(); <-analyticsDone }()
	expiryEvery := cfg.MatchExpiryEvery
	if expiryEvery <= 0 {
		expiryEvery = matchExpiryEvery
	}
	go a.RunMatchExpiry(jctx, expiryEvery, log)
	go geo.Default() // load the gazetteer now rather than on the first request that needs it
	// Pushes and emails: stopped after the last request, leases handed back.
	nctx, stopNotifications := context.WithCancel(context.Background())
	notificationsDone := make(chan struct{})
	go func() { defer close(notificationsDone); a.RunNotifications(nctx) }()
	defer func() { stopNotifications(); <-notificationsDone }()
	go a.RunEventReminders(jctx, cfg.EventReminderInterval, log)
	log.Info("listening", "addr", ln.Addr().String(), "base_url", cfg.BaseURL, "database", a.DB.Dialect,
		"startup_ms", time.Since(start).Milliseconds())

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight requests", "grace_ms", shutdownGrace.Milliseconds())
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}
