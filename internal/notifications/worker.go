package notifications

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/mail"
	"github.com/matchpoint-api/matchpoint/internal/notifications/push"
	"github.com/matchpoint-api/matchpoint/internal/notify"
)

// Mailer sends one email (internal/mail's Sender).
type Mailer interface {
	Send(ctx context.Context, m mail.Message) error
}

// WorkerConfig configures the worker; zero values take the defaults.
type WorkerConfig struct {
	Store     JobStore
	Providers []push.Provider // the configured ones; a push to another platform is dropped
	Mailer    Mailer          // nil: email is off and email jobs are dropped
	// UnsubscribeURL makes the link an email carries (Service.UnsubscribeURL).
	UnsubscribeURL func(userID, kind string) string
	Clock          clock.Clock
	Logger         *slog.Logger
	Owner          string        // lease owner name; default host name and a random suffix
	Batch          int           // jobs claimed per pass (100)
	Concurrency    int           // sends in flight (32)
	Lease          time.Duration // how long a claimed job is ours (2 min)
	Poll           time.Duration // pause when the queue is empty (1 s)
	MaxAttempts    int           // failed attempts before a job is given up (10)
	BackoffBase    time.Duration // first retry delay (5 s), doubling
	BackoffCap     time.Duration // longest retry delay (1 h)
	MaxAge         time.Duration // a push not out by then is dropped (24 h)
	Jitter         func() float64
}

// Worker sends queued pushes and emails. Any number of workers, on any
// number of nodes, drain the same queue: a job is leased to one of them at
// a time.
type Worker struct {
	cfg       WorkerConfig
	providers map[string]push.Provider
}

// NewWorker returns a worker.
func NewWorker(cfg WorkerConfig) *Worker {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Owner == "" {
		host, _ := os.Hostname()
		var b [6]byte
		_, _ = rand.Read(b[:])
		cfg.Owner = "notifications:" + host + ":" + hex.EncodeToString(b[:])
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defd := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&cfg.Batch, 100)
	def(&cfg.Concurrency, 32)
	def(&cfg.MaxAttempts, 10)
	defd(&cfg.Lease, 2*time.Minute)
	defd(&cfg.Poll, time.Second)
	defd(&cfg.BackoffBase, 5*time.Second)
	defd(&cfg.BackoffCap, time.Hour)
	defd(&cfg.MaxAge, 24*time.Hour)
	if cfg.Jitter == nil {
		cfg.Jitter = mrand.Float64
	}
	w := &Worker{cfg: cfg, providers: map[string]push.Provider{}}
	for _, p := range cfg.Providers {
		w.providers[p.Platform()] = p
	}
	return w
}

// Owner is the name the worker's leases carry.
func (w *Worker) Owner() string { return w.cfg.Owner }

// Backoff is the delay before retry number attempt (1 for the first retry):
// base doubling per attempt up to limit, with ±20 % jitter (j in [0, 1)),
// and never less than the provider's Retry-After (itself bounded by limit).
func Backoff(attempt int, retryAfter, base, limit time.Duration, j float64) time.Duration {
	d := float64(base) * math.Pow(2, float64(max(attempt-1, 0)))
	d = min(d, float64(limit))
	d *= 0.8 + 0.4*j
	return max(time.Duration(d), min(retryAfter, limit))
}

// urgent kinds wake the device; the rest may wait for it to be awake.
var urgent = map[string]bool{
	notify.KindMessage: true, notify.KindMatchRequested: true, notify.KindMatchAccepted: true,
	notify.KindEventCancelled: true, notify.KindEventReminder: true, notify.KindEventPromoted: true,
}

// decide is the check made on a job when it is claimed: it may have become
// pointless (read, turned off, too old) or fall in quiet hours.
func (w *Worker) decide(now time.Time) func(*Job) Plan {
	return func(j *Job) Plan {
		n := &j.Notification
		if now.Sub(j.CreatedAt) > w.cfg.MaxAge || (j.InCentre && n.ReadAt != nil) {
			return Plan{Action: Drop}
		}
		choice := j.Settings.Choice(n.Kind)
		switch j.Channel {
		case ChannelEmail:
			if !choice.Email || w.cfg.Mailer == nil || j.Email == "" {
				return Plan{Action: Drop}
			}
			return Plan{Action: Send}
		case ChannelPush:
			if !choice.Push || j.Device == nil || w.providers[j.Device.Platform] == nil {
				return Plan{Action: Drop}
			}
			if until, quiet := j.Settings.QuietHours.Until(now, Location(j.Settings.Timezone)); quiet {
				return Plan{Action: Wait, Until: until}
			}
			p := Plan{Action: Send}
			if j.FirstSend {
				ev, err := SentEvent(now, n, j.Device)
				if err != nil {
					w.cfg.Logger.Error("notification event", "notification_id", n.ID, "error", err.Error())
					return Plan{Action: Drop}
				}
				p.Event = ev
			}
			return p
		}
		return Plan{Action: Drop}
	}
}

// RunOnce claims one batch of due jobs, sends them and records the
// outcomes. It returns how many jobs it sent.
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	now := w.cfg.Clock.Now()
	jobs, err := w.cfg.Store.ClaimJobs(ctx, w.cfg.Owner, now, w.cfg.Lease, w.cfg.Batch, w.decide(now))
	if err != nil || len(jobs) == 0 {
		return 0, err
	}
	// Sends already started finish even when ctx ends (a node stopping):
	// their outcome is recorded, so nothing is sent twice needlessly.
	sendCtx := context.WithoutCancel(ctx)
	outcomes := make([]Outcome, len(jobs))
	sem := make(chan struct{}, w.cfg.Concurrency)
	var wg sync.WaitGroup
	for i, j := range jobs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			outcomes[i] = w.send(sendCtx, j)
		}()
	}
	wg.Wait()
	if err := w.cfg.Store.FinishJobs(sendCtx, w.cfg.Owner, outcomes); err != nil {
		return 0, err
	}
	return len(jobs), nil
}

// send makes one attempt.
func (w *Worker) send(ctx context.Context, j *Job) Outcome {
	n := &j.Notification
	log := w.cfg.Logger.With("notification_id", n.ID, "channel", j.Channel)
	if j.Channel == ChannelEmail {
		msg := Email(j.Email, n, w.cfg.UnsubscribeURL(n.UserID, n.Kind), w.cfg.Clock.Now())
		err := w.cfg.Mailer.Send(ctx, msg)
		now := w.cfg.Clock.Now()
		switch {
		case err == nil:
			return Outcome{Seq: j.Seq, Action: Done, At: now}
		case mail.Permanent(err):
			log.Warn("notification email refused", "error", err.Error())
			return Outcome{Seq: j.Seq, Action: Drop, At: now}
		}
		return w.retry(j, now, 0, err.Error(), log)
	}
	dev := j.Device
	log = log.With("device_id", dev.ID, "platform", dev.Platform)
	msg := push.Message{ID: n.ID, Kind: n.Kind, Title: n.Title, Body: n.Body, Data: n.Data, Count: n.Count,
		CollapseKey: n.CollapseKey, Created: n.CreatedAt, Urgent: urgent[n.Kind],
		TTL: max(w.cfg.MaxAge-w.cfg.Clock.Now().Sub(j.CreatedAt), 0)}
	res := w.providers[dev.Platform].Send(ctx, push.Target{Platform: dev.Platform, Token: dev.Token, P256DH: dev.P256DH, Auth: dev.Auth}, msg)
	now := w.cfg.Clock.Now()
	switch res.Status {
	case push.Accepted:
		ev, err := DeliveredEvent(now, n, dev)
		if err != nil {
			log.Error("notification event", "error", err.Error())
		}
		return Outcome{Seq: j.Seq, Action: Done, DeviceID: dev.ID, At: now, Event: ev}
	case push.Gone:
		log.Info("push target gone; device removed", "status", res.HTTPStatus, "reason", res.Reason)
		return Outcome{Seq: j.Seq, Action: Gone, DeviceID: dev.ID, At: now}
	case push.Failed:
		log.Warn("push refused", "status", res.HTTPStatus, "reason", res.Reason)
		return Outcome{Seq: j.Seq, Action: Drop, DeviceID: dev.ID, At: now}
	}
	return w.retry(j, now, res.RetryAfter, res.Reason, log)
}

// retry schedules the next attempt, or gives the job up after the last.
func (w *Worker) retry(j *Job, now time.Time, retryAfter time.Duration, reason string, log *slog.Logger) Outcome {
	attempt := j.Attempts + 1
	if attempt >= w.cfg.MaxAttempts {
		log.Warn("notification given up after retries", "attempts", attempt, "reason", reason)
		return Outcome{Seq: j.Seq, Action: Drop, At: now}
	}
	next := now.Add(Backoff(attempt, retryAfter, w.cfg.BackoffBase, w.cfg.BackoffCap, w.cfg.Jitter()))
	log.Info("notification will be retried", "attempt", attempt, "at", next, "reason", reason)
	return Outcome{Seq: j.Seq, Action: Retry, Until: next, Error: reason, At: now}
}

// Run drains the queue until ctx ends, then hands its leases back so other
// nodes take the jobs over at once.
func (w *Worker) Run(ctx context.Context) {
	defer func() {
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := w.cfg.Store.ReleaseJobs(rctx, w.cfg.Owner); err != nil {
			w.cfg.Logger.Warn("release notification leases", "error", err.Error())
		}
	}()
	for ctx.Err() == nil {
		n, err := w.RunOnce(ctx)
		if err != nil && ctx.Err() == nil {
			w.cfg.Logger.Warn("notification worker pass", "error", err.Error())
		}
		if n == w.cfg.Batch && err == nil {
			continue // more may be due
		}
		t := time.NewTimer(w.cfg.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}
