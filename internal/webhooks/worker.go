package webhooks

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
)

// ErrLeaseLost: another node took over work whose lease expired.
var ErrLeaseLost = errors.New("webhooks: lease lost")

// Worker timings.
const (
	eventLease    = 30 * time.Second // outbox events being fanned out
	deliveryLease = 30 * time.Second // deliveries held by a node, renewed while held
	pollEvery     = 25 * time.Millisecond
	fanOutBatch   = 1000
	claimBatch    = 512
	maintainEvery = 10 * time.Minute
)

// Worker consumes the outbox and delivers. Every node runs one; leases keep
// each event fanned out once and each delivery attempted by one node at a
// time, and a crashed node's leases expire for the others to take over.
//
// Fan-out claims outbox events and, in one transaction, writes a delivery
// row per subscription that may see each event and finishes the events.
// Delivery claims due rows and queues them per endpoint: each endpoint has
// its own bounded concurrency, so a slow or dead endpoint fills only its own
// slots and never delays another's deliveries. Results are written in
// batches.
type Worker struct {
	s       *Service
	owner   string
	wake    chan struct{}
	results chan *Outcome
	wg      sync.WaitGroup // sends in flight

	mu      sync.Mutex
	queues  map[string]*endpoint
	held    int
	maxHeld int
	sendCtx context.Context
}

type endpoint struct {
	pending  []*Job
	inflight int
}

// NewWorker returns the delivery worker of s.
func (s *Service) NewWorker() *Worker {
	return &Worker{s: s, owner: s.node, wake: make(chan struct{}, 1), results: make(chan *Outcome, 1024),
		queues: map[string]*endpoint{}, maxHeld: 4096}
}

func (w *Worker) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Run works until ctx ends, then finishes the attempts in flight (each is
// bounded by the timeout), records them and hands every lease back.
func (w *Worker) Run(ctx context.Context) {
	sendCtx, cancelSends := context.WithCancel(context.Background())
	defer cancelSends()
	w.sendCtx = sendCtx
	var loops sync.WaitGroup
	for _, loop := range []func(context.Context){w.fanOutLoop, w.claimLoop, w.heartbeat, w.verifyLoop, w.maintain} {
		loops.Add(1)
		go func() { defer loops.Done(); loop(ctx) }()
	}
	flushed := make(chan struct{})
	go func() { w.resultsLoop(); close(flushed) }()

	<-ctx.Done()
	loops.Wait()
	w.mu.Lock()
	for id, q := range w.queues { // queued, not started: their leases go back
		w.held -= len(q.pending)
		q.pending = nil
		if q.inflight == 0 {
			delete(w.queues, id)
		}
	}
	w.mu.Unlock()
	done := make(chan struct{})
	go func() { w.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(w.s.cfg.Timeout + 2*time.Second):
		cancelSends()
		<-done
	}
	close(w.results)
	<-flushed
	bg, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.s.store.ReleaseDeliveries(bg, w.owner); err != nil {
		w.s.log.Warn("release webhook deliveries", "error", err.Error())
	}
	if err := w.s.store.ReleaseEvents(bg, w.owner); err != nil {
		w.s.log.Warn("release outbox events", "error", err.Error())
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (w *Worker) fanOutLoop(ctx context.Context) {
	for ctx.Err() == nil {
		n, err := w.FanOutOnce(ctx)
		if err != nil && ctx.Err() == nil {
			w.s.log.Warn("webhook fan-out", "error", err.Error())
		}
		if n > 0 {
			w.signal()
			continue
		}
		if !sleep(ctx, pollEvery) {
			return
		}
	}
}

// FanOutOnce fans out one batch of outbox events and reports how many.
func (w *Worker) FanOutOnce(ctx context.Context) (int, error) {
	now := w.s.clock.Now()
	claimed, err := w.s.store.ClaimEvents(ctx, w.owner, now, eventLease, fanOutBatch)
	if err != nil || len(claimed) == 0 {
		return 0, err
	}
	seen := map[string]bool{}
	var audience []string
	for _, c := range claimed {
		for _, u := range c.Event.Audience {
			if !seen[u] {
				seen[u] = true
				audience = append(audience, u)
			}
		}
		if c.Event.UserID != "" && !seen[c.Event.UserID] && c.Event.Type == KindFailing {
			seen[c.Event.UserID] = true
			audience = append(audience, c.Event.UserID)
		}
	}
	targets, err := w.s.store.Targets(ctx, audience)
	if err != nil {
		return 0, err
	}
	seqs := make([]int64, 0, len(claimed))
	var ds []*Delivery
	var jobs []*Job
	admit := w.admit()
	for _, c := range claimed {
		seqs = append(seqs, c.Seq)
		for _, t := range targets {
			if !t.sees(&c.Event) {
				continue
			}
			d := &Delivery{ID: ids.New(ids.Delivery), SubscriptionID: t.ID, EventSeq: c.Seq, EventID: c.Event.ID,
				EventType: c.Event.Type, Status: DeliveryPending, NextAttemptAt: now, CreatedAt: now}
			// New deliveries this node has room for are leased to it as they
			// are written and sent at once; the rest wait for any node's claim.
			if t.Transport == TransportHTTPS && !t.paused() && admit(t.ID) {
				d.LeaseUntil = now.Add(deliveryLease)
				jobs = append(jobs, &Job{Delivery: *d, Sub: *t, Body: c.Event.Payload, Audience: c.Event.Audience})
			}
			ds = append(ds, d)
		}
	}
	if err := w.s.store.FanOut(ctx, w.owner, seqs, ds); err != nil {
		if errors.Is(err, ErrLeaseLost) {
			return 0, nil // another node took the batch over and does it
		}
		return 0, err
	}
	for _, j := range jobs {
		w.dispatch(j)
	}
	return len(claimed), nil
}

// admit returns a function that admits new deliveries for this node to
// send at once: within this node's bound and each endpoint's queue bound.
func (w *Worker) admit() func(sub string) bool {
	w.mu.Lock()
	total := w.maxHeld - w.held
	used := map[string]int{}
	for id, q := range w.queues {
		used[id] = len(q.pending) + q.inflight
	}
	w.mu.Unlock()
	// An endpoint's local queue may grow to a quarter of the node's bound:
	// its leases are renewed while queued, and the claim skips it when full.
	limit := max(w.maxHeld/4, 5*w.s.cfg.PerEndpoint)
	return func(sub string) bool {
		if total <= 0 || used[sub] >= limit {
			return false
		}
		total--
		used[sub]++
		return true
	}
}

func (w *Worker) claimLoop(ctx context.Context) {
	t := time.NewTicker(pollEvery * 2)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		case <-t.C:
		}
		for ctx.Err() == nil {
			n, full := w.claim(ctx)
			if n < claimBatch || full {
				break
			}
		}
	}
}

// claim takes due deliveries up to this node's room, skipping endpoints
// whose own queue is full (their backlog must not crowd out the others).
func (w *Worker) claim(ctx context.Context) (n int, full bool) {
	w.mu.Lock()
	room := w.maxHeld - w.held
	var skip []string
	for id, q := range w.queues {
		if len(q.pending) >= 4*w.s.cfg.PerEndpoint {
			skip = append(skip, id)
		}
	}
	w.mu.Unlock()
	if room <= 0 {
		return 0, true
	}
	jobs, err := w.s.store.ClaimDeliveries(ctx, w.owner, w.s.clock.Now(), deliveryLease, min(room, claimBatch), skip)
	if err != nil {
		if ctx.Err() == nil {
			w.s.log.Warn("claim webhook deliveries", "error", err.Error())
		}
		return 0, false
	}
	for _, j := range jobs {
		w.dispatch(j)
	}
	return len(jobs), len(jobs) >= room
}

func (w *Worker) dispatch(j *Job) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.held++
	q := w.queues[j.Sub.ID]
	if q == nil {
		q = &endpoint{}
		w.queues[j.Sub.ID] = q
	}
	if q.inflight < w.s.cfg.PerEndpoint {
		q.inflight++
		w.wg.Add(1)
		go w.send(j)
		return
	}
	q.pending = append(q.pending, j)
}

func (w *Worker) send(j *Job) {
	defer w.wg.Done()
	sub := j.Sub.ID
	for j != nil {
		w.results <- w.s.deliver(w.sendCtx, j, w.owner)
		w.mu.Lock()
		w.held--
		q := w.queues[sub]
		j = nil
		if len(q.pending) > 0 {
			j, q.pending = q.pending[0], q.pending[1:]
		} else if q.inflight--; q.inflight == 0 {
			delete(w.queues, sub)
		}
		// Refill before the queue runs dry, rather than at the next tick.
		low := len(q.pending) == w.s.cfg.PerEndpoint
		w.mu.Unlock()
		if low {
			w.signal()
		}
	}
}

// deliver attempts a claimed job, unless the subscription may no longer see
// the event (its credential was revoked, its account downgraded): then the
// delivery fails without being sent.
func (s *Service) deliver(ctx context.Context, j *Job, owner string) *Outcome {
	if out := s.deliverable(j, owner); out != nil {
		return out
	}
	out := s.attempt(ctx, j)
	out.Owner = owner
	return out
}

// deliverable returns nil when j may be sent, else the outcome of not
// sending it.
func (s *Service) deliverable(j *Job, owner string) *Outcome {
	if j.Delivery.Test {
		return nil
	}
	ev := outbox.Event{ID: j.Delivery.EventID, Type: j.Delivery.EventType, Audience: j.Audience, Payload: j.Body}
	if ev.Type == KindFailing {
		ev.UserID = j.Sub.UserID
	}
	if j.Sub.visible(&ev) {
		return nil
	}
	return &Outcome{Job: j, Owner: owner, Final: DeliveryFailed, Attempt: Attempt{Number: j.Delivery.Attempts + 1,
		StartedAt: s.clock.Now(), Node: s.node, Error: "not sent: the subscription's credential may no longer read this event"}}
}

// resultsLoop writes outcomes in batches: one transaction for many.
func (w *Worker) resultsLoop() {
	var batch []*Outcome
	flush := func() {
		if len(batch) > 0 {
			w.s.record(batch)
			batch = batch[:0]
		}
	}
	for {
		o, ok := <-w.results
		if !ok {
			flush()
			return
		}
		batch = append(batch, o)
		timeout := time.After(5 * time.Millisecond)
	fill:
		for len(batch) < 256 {
			select {
			case o, ok := <-w.results:
				if !ok {
					flush()
					return
				}
				batch = append(batch, o)
			case <-timeout:
				break fill
			}
		}
		flush()
	}
}

// record writes outcomes and emails the owners of endpoints that just
// became failing. A batch that fails is retried one by one; an outcome that
// cannot be written is dropped, and its lease expires for a new attempt.
func (s *Service) record(batch []*Outcome) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	failing, err := s.store.RecordOutcomes(ctx, s.clock.Now(), batch)
	if err != nil && len(batch) > 1 {
		s.log.Warn("record webhook outcomes", "error", err.Error(), "batch", len(batch))
		failing = nil
		for _, o := range batch {
			f, err := s.store.RecordOutcomes(ctx, s.clock.Now(), []*Outcome{o})
			if err != nil {
				s.log.Warn("record webhook outcome", "delivery_id", o.Job.Delivery.ID, "error", err.Error())
			}
			failing = append(failing, f...)
		}
	} else if err != nil {
		s.log.Warn("record webhook outcome", "error", err.Error())
	}
	// The owner hears of it through the webhook.failing notification written
	// with the failure (in the centre, and by email when they want it).
	for _, f := range failing {
		s.log.Info("webhook endpoint failing", "webhook_id", f.SubscriptionID, "user_id", f.UserID, "error", f.LastError)
	}
}

// heartbeat renews the leases of everything this node holds.
func (w *Worker) heartbeat(ctx context.Context) {
	for sleep(ctx, deliveryLease/3) {
		if err := w.s.store.ExtendLeases(ctx, w.owner, w.s.clock.Now().Add(deliveryLease)); err != nil && ctx.Err() == nil {
			w.s.log.Warn("renew webhook leases", "error", err.Error())
		}
	}
}

// verifyLoop sends the challenge of new endpoints once it is due.
func (w *Worker) verifyLoop(ctx context.Context) {
	for sleep(ctx, 250*time.Millisecond) {
		w.VerifyDue(ctx)
	}
}

// VerifyDue sends every due challenge and returns how many.
func (w *Worker) VerifyDue(ctx context.Context) int {
	subs, err := w.s.store.TakeVerifications(ctx, w.s.clock.Now(), 32)
	if err != nil {
		if ctx.Err() == nil {
			w.s.log.Warn("take webhook verifications", "error", err.Error())
		}
		return 0
	}
	var wg sync.WaitGroup
	for _, sub := range subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := w.s.verify(w.sendCtx, sub); err != nil {
				w.s.log.Warn("verify webhook", "webhook_id", sub.ID, "error", err.Error())
			}
		}()
	}
	wg.Wait()
	return len(subs)
}

// maintain deletes deliveries past their retention and stream
// subscriptions nobody reads any more.
func (w *Worker) maintain(ctx context.Context) {
	for {
		now := w.s.clock.Now()
		if n, err := w.s.store.PurgeDeliveries(ctx, now.Add(-w.s.cfg.Retention)); err != nil && ctx.Err() == nil {
			w.s.log.Warn("purge webhook deliveries", "error", err.Error())
		} else if n > 0 {
			w.s.log.Info("purged webhook deliveries", "deleted", n)
		}
		if _, err := w.s.store.DeleteStaleStreams(ctx, now.Add(-streamIdle)); err != nil && ctx.Err() == nil {
			w.s.log.Warn("delete idle stream subscriptions", "error", err.Error())
		}
		if !sleep(ctx, maintainEvery) {
			return
		}
	}
}

// Step runs one pass of everything synchronously, for tests that drive the
// worker with a fake clock: fan out, verify what is due, attempt every due
// delivery, record. It returns how many deliveries it attempted.
func (w *Worker) Step(ctx context.Context) (int, error) {
	if w.sendCtx == nil {
		w.sendCtx = context.Background()
	}
	for {
		n, err := w.FanOutOnce(ctx)
		if err != nil {
			return 0, err
		}
		if n == 0 {
			break
		}
	}
	w.VerifyDue(ctx)
	total := 0
	for {
		jobs, err := w.s.store.ClaimDeliveries(ctx, w.owner, w.s.clock.Now(), deliveryLease, claimBatch, nil)
		if err != nil {
			return total, err
		}
		if len(jobs) == 0 {
			return total, nil
		}
		outs := make([]*Outcome, len(jobs))
		var wg sync.WaitGroup
		for i, j := range jobs {
			wg.Add(1)
			go func() { defer wg.Done(); outs[i] = w.s.deliver(ctx, j, w.owner) }()
		}
		wg.Wait()
		w.s.record(outs)
		total += len(jobs)
	}
}
