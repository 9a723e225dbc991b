// Package app assembles the service: it opens and migrates the database,
// builds every domain service over the store and the HTTP handler over the
// services. The command and the end-to-end tests both start it here.
package app

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/matchpoint-api/matchpoint/internal/analytics"
	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/clientip"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/egress"
	"github.com/matchpoint-api/matchpoint/internal/events"
	"github.com/matchpoint-api/matchpoint/internal/geo"
	"github.com/matchpoint-api/matchpoint/internal/httpapi"
	"github.com/matchpoint-api/matchpoint/internal/idempotency"
	"github.com/matchpoint-api/matchpoint/internal/mail"
	"github.com/matchpoint-api/matchpoint/internal/matching"
	"github.com/matchpoint-api/matchpoint/internal/messaging"
	"github.com/matchpoint-api/matchpoint/internal/moderation"
	"github.com/matchpoint-api/matchpoint/internal/notifications"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
	"github.com/matchpoint-api/matchpoint/internal/ratelimit"
	"github.com/matchpoint-api/matchpoint/internal/sessions"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/stream"
	"github.com/matchpoint-api/matchpoint/internal/users"
	"github.com/matchpoint-api/matchpoint/internal/web"
	"github.com/matchpoint-api/matchpoint/internal/webhooks"
)

// Version of the service and its API.
const Version = "1.0.0"

// App is the assembled service.
type App struct {
	DB        *store.DB
	Clock     clock.Clock
	Users     *users.Service
	OAuth     *oauth.Service
	Keys      *apikeys.Service
	Sessions  *sessions.Service
	Outbox    *store.Outbox
	Limiter   ratelimit.Limiter // rate-limit counters: in process, or in Redis
	Webhooks  *webhooks.Service
	Matching  *matching.Service
	Events    *events.Service
	Messaging *messaging.Service
	Handler   http.Handler
	// Moderation screens texts and holds reports, cases and suspensions.
	Moderation *moderation.Service

	// Notifications: the centre, and the worker that pushes and mails.
	Notifications      *notifications.Service
	NotificationWorker *notifications.Worker
	NotificationStore  *store.Notifications
	Mail               *mail.Sender // nil without MATCHPOINT_SMTP_URL

	// Stream is this node's real-time stream hub; it runs from Open to Close.
	Stream     *stream.Hub
	stopStream func()

	retention store.Retention
	cfg       config.Config // what the background workers are configured with
	log       *slog.Logger

	// Request analytics: counted in memory, flushed every AnalyticsFlush.
	Requests          *analytics.Recorder
	Analytics         *analytics.Service
	analyticsFlush    time.Duration
	analyticsRetained analytics.Retention
	deps              httpapi.Deps // what Handler serves
}

// Options are what tests and benchmarks may replace.
type Options struct {
	Clock  clock.Clock  // default: the real clock
	Logger *slog.Logger // default: slog.Default()
	// RateLimitPrefix prefixes the rate-limit keys in Redis; default
	// "matchpoint:ratelimit:" (tests use one of their own).
	RateLimitPrefix string
}

// Open connects, migrates and assembles the service.
func Open(ctx context.Context, cfg config.Config, opts Options) (*App, error) {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	db, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	if applied, err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	} else if len(applied) > 0 {
		opts.Logger.Info("migrated database", "applied", applied)
	}
	a, err := assemble(ctx, db, cfg, opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	return a, nil
}

func assemble(ctx context.Context, db *store.DB, cfg config.Config, opts Options) (*App, error) {
	clk := opts.Clock
	a := &App{
		DB: db, Clock: clk, cfg: cfg, log: opts.Logger,
		Users:     users.NewService(store.NewUsers(db), clk),
		OAuth:     oauth.NewService(store.NewOAuth(db), clk),
		Keys:      apikeys.NewService(store.NewAPIKeys(db), clk, opts.Logger),
		Sessions:  sessions.NewService(store.NewSessions(db), clk),
		Outbox:    store.NewOutbox(db),
		Events:    events.NewService(store.NewEvents(db), clk, events.Options{}),
		Messaging: messaging.NewService(store.NewMessaging(db), clk),
	}
	a.Matching = matching.NewService(store.NewMatching(db), clk, matching.Settings{RequestTTL: cfg.MatchRequestTTL,
		SuppressAfter: cfg.MatchSuppressAfter, SuppressFor: cfg.MatchSuppressFor, PendingCap: cfg.MatchPendingCap})
	a.Users.SetGeocoder(lazyGeocoder{})
	a.Events.SetGeocoder(lazyGeocoder{})
	a.Events.SetMatchGraph(store.NewMatchGraph(db))
	a.Users.SetRelations(a.Matching.Relations())
	a.retention = store.DefaultRetention
	if cfg.OutboxRetention > 0 {
		a.retention.Outbox = cfg.OutboxRetention
	}
	csrfKey, err := db.InstanceKey(ctx, "csrf", randomKey, clk.Now().UnixMicro())
	if err != nil {
		return nil, err
	}
	key, err := base64.StdEncoding.DecodeString(csrfKey)
	if err != nil {
		return nil, fmt.Errorf("app: stored CSRF key: %w", err)
	}
	pages, err := web.New(web.Config{BaseURL: cfg.BaseURL, DocsURL: cfg.DocsURL, CSRFKey: key,
		Users: a.Users, OAuth: a.OAuth, Session: a.Sessions, Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	if err := assembleNotifications(ctx, a, cfg, clk, opts.Logger); err != nil {
		return nil, err
	}
	proxies, err := clientip.ParseTrusted(cfg.TrustedProxies)
	if err != nil {
		return nil, err
	}
	a.Limiter = ratelimit.NewLocal(clk)
	if cfg.RedisURL != "" {
		if a.Limiter, err = ratelimit.NewRedis(ratelimit.RedisOptions{URL: cfg.RedisURL, Prefix: opts.RateLimitPrefix,
			Clock: clk, Logger: opts.Logger}); err != nil {
			return nil, err
		}
	}
	if a.Webhooks, err = newWebhooks(ctx, db, cfg, clk, opts.Logger); err != nil {
		return nil, err
	}
	if err := assembleAnalytics(a, db, cfg, opts, pages); err != nil {
		return nil, err
	}
	assembleModeration(a, cfg, clk, opts.Logger)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// The real-time stream: one reader per node, woken by commits (LISTEN/
	// NOTIFY on PostgreSQL), fanning out to this node's connections.
	if cfg.Stream.Retention > 0 {
		a.retention.Stream = cfg.Stream.Retention
	}
	a.Stream = stream.NewHub(store.NewStream(db), stream.Options{Buffer: cfg.Stream.Buffer, Clock: clk, Logger: opts.Logger})
	a.Stream.Register(reg)
	sctx, stopStream := context.WithCancel(context.Background())
	streamDone := make(chan struct{})
	go func() { defer close(streamDone); a.Stream.Run(sctx) }()
	var once sync.Once
	a.stopStream = func() { once.Do(func() { stopStream(); <-streamDone }) }
	a.deps = httpapi.Deps{
		BaseURL: cfg.BaseURL, DocsURL: cfg.DocsURL, Version: Version,
		Users: a.Users, OAuth: a.OAuth, Keys: a.Keys, Idem: idempotency.NewService(store.NewIdempotency(db), clk),
		Web: pages, Ready: db.PingContext, Logger: opts.Logger, Registry: reg, ClientIP: clientip.New(proxies),
		Limiter: a.Limiter, AnonymousLimit: cfg.AnonymousLimit,
		Webhooks: a.Webhooks, Matching: a.Matching, Places: geo.Default,
		Notifications: a.Notifications, Events: a.Events,
		Messaging: a.Messaging,
		Requests:  a.Requests, Analytics: a.Analytics,
		Stream: a.Stream, StreamHeartbeat: cfg.Stream.Heartbeat,
		Moderation: a.Moderation,
	}
	a.Handler = httpapi.New(a.deps)
	// Load the gazetteer now, beside everything else, rather than on the
	// first request that resolves a place: that request would otherwise wait
	// seconds for it. Loading happens once per process.
	go geo.Default()
	return a, nil
}

func randomKey() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(b[:])
}

// StopStream ends every real-time stream connection of this node (their
// clients reconnect elsewhere with Last-Event-ID) and stops its hub; a
// shutting-down server calls it so that open streams do not hold it up.
func (a *App) StopStream() {
	if a.stopStream != nil {
		a.stopStream()
	}
}

// Close releases the database and the rate limiter's Redis connections.
func (a *App) Close() error {
	a.StopStream()
	if c, ok := a.Limiter.(interface{ Close() error }); ok {
		c.Close()
	}
	return a.DB.Close()
}

// lazyGeocoder resolves place labels with the embedded gazetteer, loaded on
// first use (serve warms it up at start).
type lazyGeocoder struct{}

func (lazyGeocoder) Geocode(label string) (float64, float64, bool) {
	return geo.Default().Geocode(label)
}

// RunMatchExpiry expires pending match requests past their time every
// interval until ctx ends; every node runs it, each expiry happens once.
func (a *App) RunMatchExpiry(ctx context.Context, interval time.Duration, log *slog.Logger) {
	a.Matching.RunExpiry(ctx, interval, log)
}

// textIndexSegments is how many segments a SQLite full-text index may
// gather before the janitor merges them into one (store.MergeTextIndexes).
const textIndexSegments = 4

// RunJanitor purges expired rows, and merges SQLite's full-text index
// segments, every interval until ctx ends.
func (a *App) RunJanitor(ctx context.Context, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := a.DB.PurgeExpired(ctx, a.Clock.Now(), a.retention)
		if err != nil && ctx.Err() == nil {
			log.Warn("purge expired rows", "error", err.Error())
		} else if err == nil {
			log.Debug("purged expired rows", "deleted", n)
		}
		if err := a.DB.MergeTextIndexes(ctx, textIndexSegments); err != nil && ctx.Err() == nil {
			log.Warn("merge full-text index segments", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// newWebhooks assembles webhook delivery; its secrets are sealed with an
// instance key that every node shares.
func newWebhooks(ctx context.Context, db *store.DB, cfg config.Config, clk clock.Clock, log *slog.Logger) (*webhooks.Service, error) {
	sealKey, err := db.InstanceKey(ctx, "webhook-secrets", randomKey, clk.Now().UnixMicro())
	if err != nil {
		return nil, err
	}
	key, err := base64.StdEncoding.DecodeString(sealKey)
	if err != nil {
		return nil, fmt.Errorf("app: stored webhook key: %w", err)
	}
	schedule, err := cfg.RetrySchedule()
	if err != nil {
		return nil, err
	}
	egressIPs, err := cfg.EgressIPs()
	if err != nil {
		return nil, err
	}
	return webhooks.NewService(store.NewWebhooks(db), clk, key, webhooks.Config{
		Policy: egress.Policy{AllowPrivate: cfg.WebhookAllowPrivate}, CAFile: cfg.WebhookCAFile, Timeout: cfg.WebhookTimeout,
		Schedule: schedule, Retention: cfg.WebhookRetention, EgressIPs: egressIPs, SMTPURL: cfg.SMTPURL, Logger: log,
	})
}

// RunWebhooks delivers webhooks until ctx ends, then finishes the attempts
// in flight and hands its leases back.
func (a *App) RunWebhooks(ctx context.Context) { a.Webhooks.NewWorker().Run(ctx) }

// RunEventReminders sends the sports events' due reminders every interval
// until ctx ends. Every node runs it; each reminder is sent once.
func (a *App) RunEventReminders(ctx context.Context, interval time.Duration, log *slog.Logger) {
	a.Events.RunReminders(ctx, interval, log)
}
