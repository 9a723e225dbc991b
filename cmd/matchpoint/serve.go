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

const serveUsage = `usage: matchpoint serve [flags]

Run the HTTP service: the /v1 API, the OAuth endpoints, the sign-in pages and
the documentation. The database schema is brought up to date first.
`

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
	srv.RegisterOnShutdown(a.StopStream) // open streams end, their clients reconnect elsewhere
	// Serve once the gazetteer (loading since Open) is in memory: a node
	// answering /readyz before that would make its first requests that place
	// a label wait for it, seconds on a busy machine, while a load balancer
	// already sends it traffic.
	geo.Default()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	// Background work (webhooks, notifications, expiries, the janitor)
	// stops after the last request, its leases handed back.
	wctx, stopWorkers := context.WithCancel(context.Background())
	workersDone := make(chan struct{})
	go func() { defer close(workersDone); a.Run(wctx) }()
	defer func() { stopWorkers(); <-workersDone }()
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
	stopWorkers()
	<-workersDone
	log.Info("stopped")
	return nil
}
