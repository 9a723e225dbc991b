package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/config"
)

// shutdownGrace is how long in-flight requests get to finish on SIGTERM.
const shutdownGrace = 30 * time.Second

// janitorEvery is how often expired sessions, codes, tokens and idempotency
// keys are deleted.
const janitorEvery = 10 * time.Minute

func serve(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	start := time.Now()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := config.Register(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	a, err := app.Open(ctx, *cfg, app.Options{Logger: log})
	if err != nil {
		return err
	}
	defer a.Close()

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
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
	go a.RunEventReminders(jctx, cfg.EventReminderInterval, log)
	log.Info("listening", "addr", ln.Addr().String(), "base_url", cfg.BaseURL, "database", a.DB.Dialect,
		"startup", time.Since(start).Round(time.Millisecond).String())

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight requests", "grace", shutdownGrace.String())
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
