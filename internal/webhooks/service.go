package webhooks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/egress"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
)

// DefaultSchedule is the wait before each retry after a failed attempt
// (DECISIONS.md): 7 retries over about 28 hours, with ±20 % jitter.
var DefaultSchedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	5 * time.Hour, 10 * time.Hour, 10 * time.Hour}

// Limits.
const (
	DefaultTimeout   = 15 * time.Second
	DefaultRetention = 30 * 24 * time.Hour
	// disableAfter is how long an endpoint may fail without a success
	// before it is disabled.
	disableAfter = 5 * 24 * time.Hour
	// rotationGrace is how long a rotated secret keeps signing.
	rotationGrace = 24 * time.Hour
	// verifyDelay gives a new endpoint's owner time to store the secret
	// from the creation answer before the signed challenge arrives.
	verifyDelay = time.Second
	// streamIdle is how long a stream subscription lives without a reader.
	streamIdle = 10 * time.Minute
	// MaxPerAccount bounds an account's subscriptions.
	MaxPerAccount   = 50
	maxEvents       = 32
	maxURL          = 2048
	maxDescription  = 256
	responseExcerpt = 4 << 10
)

// Config is what the operator sets.
type Config struct {
	Policy    egress.Policy
	CAFile    string
	Timeout   time.Duration   // per attempt (default 15 s)
	Schedule  []time.Duration // retries; nil: DefaultSchedule with jitter
	Retention time.Duration   // deliveries kept (default 30 days)
	EgressIPs []string        // published at GET /api/v1/webhooks/ip-ranges
	SMTPURL   string          // smtp://[user:pass@]host:port[?from=addr]; empty: no email
	// PerEndpoint bounds concurrent deliveries to one subscription (32).
	PerEndpoint int
	Logger      *slog.Logger
}

// Service manages subscriptions and delivers events.
type Service struct {
	store    Store
	clock    clock.Clock
	sealer   *Sealer
	client   *http.Client
	cfg      Config
	jitter   bool
	node     string
	log      *slog.Logger
	schedule []time.Duration
}

// NewService returns the webhooks service. key seals endpoint secrets.
func NewService(st Store, clk clock.Clock, key []byte, cfg Config) (*Service, error) {
	sealer, err := NewSealer(key)
	if err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Retention <= 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.PerEndpoint <= 0 {
		cfg.PerEndpoint = 32
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	client, err := egress.NewClient(egress.Options{Policy: cfg.Policy, CAFile: cfg.CAFile, Timeout: cfg.Timeout,
		MaxConnsPerHost: max(cfg.PerEndpoint*4, 64)})
	if err != nil {
		return nil, err
	}
	s := &Service{store: st, clock: clk, sealer: sealer, client: client, cfg: cfg, log: cfg.Logger,
		schedule: cfg.Schedule, jitter: cfg.Schedule == nil, node: nodeName()}
	if s.schedule == nil {
		s.schedule = DefaultSchedule
	}
	return s, nil
}

// nodeName names this process in leases and attempt records.
func nodeName() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Node is this process's name in leases.
func (s *Service) Node() string { return s.node }

// EgressIPs are the addresses deliveries come from, as configured.
func (s *Service) EgressIPs() []string { return slices.Clone(s.cfg.EgressIPs) }

// Spec is what creating a subscription asks for.
type Spec struct {
	URL         string
	Events      []string
	Description string
	Transport   string // https (default) or stream
}

// Patch is what updating a subscription may change; nil leaves a field.
type Patch struct {
	URL         *string
	Events      []string
	Description *string
}

// credentialOf reads the credential behind p for a new subscription.
func credentialOf(p *auth.Principal) (key, grant, client string, err error) {
	switch {
	case p.APIKeyID != "":
		return p.APIKeyID, "", "", nil
	case p.GrantID != "":
		return "", p.GrantID, p.ClientID, nil
	}
	return "", "", "", apperr.Forbiddenf("forbidden", "webhooks are subscribed with an API key or an OAuth access token")
}

// checkEvents validates and normalises a list of kinds and wildcards, and
// refuses kinds the credential could not read through the API.
func checkEvents(events []string, scopes []string, admin bool) ([]string, error) {
	if len(events) == 0 {
		return nil, apperr.InvalidParam("events", "no_event_types", "events must name at least one event type (or a wildcard such as user.*)")
	}
	if len(events) > maxEvents {
		return nil, apperr.InvalidParam("events", "too_many", "events holds at most %d entries", maxEvents)
	}
	var out []string
	for _, e := range events {
		e = strings.TrimSpace(e)
		if !ValidPattern(e) {
			return nil, apperr.InvalidParam("events", "unknown_event_type", "%q is not an event type of the API (user.created, match.*, ...)", e)
		}
		for _, k := range patternKinds(e) {
			if !Readable(k, scopes, admin) {
				return nil, apperr.InvalidParam("events", "event_type_not_readable",
					"the credential cannot read %s events: it needs one of the scopes %s", k, strings.Join(ReadScopes(k), ", "))
			}
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

func checkDescription(d string) (string, error) {
	d = strings.TrimSpace(d)
	if len(d) > maxDescription {
		return "", apperr.InvalidParam("description", "too_long", "description is at most %d bytes", maxDescription)
	}
	if strings.IndexFunc(d, unicode.IsControl) >= 0 {
		return "", apperr.InvalidParam("description", "invalid_text", "description must be one line of text")
	}
	return d, nil
}

func (s *Service) checkURL(u string) (string, error) {
	u = strings.TrimSpace(u)
	if u == "" {
		return "", apperr.InvalidParam("url", "invalid_url", "url is required: the https address of your endpoint")
	}
	if len(u) > maxURL {
		return "", apperr.InvalidParam("url", "invalid_url", "url is at most %d characters", maxURL)
	}
	if err := s.cfg.Policy.CheckURL(u); err != nil {
		return "", apperr.InvalidParam("url", "invalid_url", "url %s", err.Error())
	}
	return u, nil
}

// Create subscribes the caller's account. The answer holds the secret, the
// only time it is shown.
func (s *Service) Create(ctx context.Context, p *auth.Principal, spec Spec) (*Subscription, string, error) {
	key, grant, client, err := credentialOf(p)
	if err != nil {
		return nil, "", err
	}
	if spec.Transport == "" {
		spec.Transport = TransportHTTPS
	}
	if spec.Transport != TransportHTTPS && spec.Transport != TransportStream {
		return nil, "", apperr.InvalidParam("transport", "invalid_transport", "transport is https or stream")
	}
	admin := p.Has(auth.ScopeAdmin)
	sub := &Subscription{ID: ids.New(ids.Webhook), UserID: p.UserID, APIKeyID: key, GrantID: grant, ClientID: client,
		Scopes: slices.Clone(p.Scopes), Admin: admin, Transport: spec.Transport, CredentialLive: true, Tier: p.Tier}
	if spec.Transport == TransportHTTPS {
		if sub.URL, err = s.checkURL(spec.URL); err != nil {
			return nil, "", err
		}
	} else if spec.URL != "" {
		return nil, "", apperr.InvalidParam("url", "invalid_url", "a stream subscription has no url: matchpoint listen reads it")
	}
	if sub.Events, err = checkEvents(spec.Events, p.Scopes, admin); err != nil {
		return nil, "", err
	}
	if sub.Description, err = checkDescription(spec.Description); err != nil {
		return nil, "", err
	}
	n, err := s.store.CountSubscriptions(ctx, p.UserID)
	if err != nil {
		return nil, "", err
	}
	if n >= MaxPerAccount {
		return nil, "", apperr.Conflictf("webhook_limit_reached", "", "an account has at most %d webhook subscriptions; delete one first", MaxPerAccount)
	}
	now := s.clock.Now()
	secret := newSecret()
	sub.SecretEnc = s.sealer.Seal(secret)
	sub.CreatedAt, sub.UpdatedAt = now, now
	if sub.Transport == TransportStream {
		sub.Status, sub.LastSeenAt = StatusActive, &now
	} else {
		due := now.Add(verifyDelay)
		sub.Status, sub.VerifyDueAt = StatusPending, &due
	}
	if err := s.store.CreateSubscription(ctx, sub); err != nil {
		return nil, "", err
	}
	return sub, secret, nil
}

// own returns the subscription if p may manage it: its account, through an
// API key, a first-party client, or the same OAuth client that made it (a
// third-party app never sees another app's endpoints). Anything else is a
// 404, never a 403.
func (s *Service) own(ctx context.Context, p *auth.Principal, id string) (*Subscription, error) {
	notFound := apperr.NotFoundf("no webhook %q", id)
	if !ids.Valid(ids.Webhook, id) {
		return nil, notFound
	}
	sub, err := s.store.Subscription(ctx, id)
	if apperr.IsKind(err, apperr.NotFound) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	if !owns(p, sub) {
		return nil, notFound
	}
	return sub, nil
}

func owns(p *auth.Principal, sub *Subscription) bool {
	if sub.UserID != p.UserID {
		return false
	}
	return p.APIKeyID != "" || p.FirstParty || (p.ClientID != "" && sub.ClientID == p.ClientID)
}

// clientFilter is the OAuth client whose subscriptions p may list ("" all).
func clientFilter(p *auth.Principal) string {
	if p.APIKeyID != "" || p.FirstParty {
		return ""
	}
	return p.ClientID
}

// List pages through the caller's subscriptions, oldest first.
func (s *Service) List(ctx context.Context, p *auth.Principal, after string, limit int) ([]*Subscription, error) {
	return s.store.ListSubscriptions(ctx, p.UserID, clientFilter(p), after, limit)
}

// Get returns one of the caller's subscriptions.
func (s *Service) Get(ctx context.Context, p *auth.Principal, id string) (*Subscription, error) {
	return s.own(ctx, p, id)
}

// modify changes one of the caller's subscriptions under a row lock.
func (s *Service) modify(ctx context.Context, p *auth.Principal, id string, fn func(sub *Subscription, now time.Time) error) (*Subscription, error) {
	if _, err := s.own(ctx, p, id); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	return s.store.ModifySubscription(ctx, id, func(sub *Subscription) error {
		if err := fn(sub, now); err != nil {
			return err
		}
		sub.UpdatedAt = now
		return nil
	})
}

// Update changes url, events or description. A new url must be verified
// again before deliveries resume.
func (s *Service) Update(ctx context.Context, p *auth.Principal, id string, patch Patch) (*Subscription, error) {
	return s.modify(ctx, p, id, func(sub *Subscription, now time.Time) error {
		if patch.URL != nil {
			if sub.Transport == TransportStream {
				return apperr.InvalidParam("url", "invalid_url", "a stream subscription has no url")
			}
			u, err := s.checkURL(*patch.URL)
			if err != nil {
				return err
			}
			if u != sub.URL {
				due := now.Add(verifyDelay)
				sub.URL, sub.VerifiedAt, sub.VerifyDueAt, sub.Verification = u, nil, &due, nil
				if sub.Status != StatusDisabled {
					sub.Status = StatusPending
				}
			}
		}
		if patch.Events != nil {
			// The credential that receives the events is the one that made
			// the subscription, whoever edits it.
			evs, err := checkEvents(patch.Events, sub.Scopes, sub.Admin)
			if err != nil {
				return err
			}
			sub.Events = evs
		}
		if patch.Description != nil {
			d, err := checkDescription(*patch.Description)
			if err != nil {
				return err
			}
			sub.Description = d
		}
		return nil
	})
}

// Delete removes a subscription and its delivery log.
func (s *Service) Delete(ctx context.Context, p *auth.Principal, id string) error {
	if _, err := s.own(ctx, p, id); err != nil {
		return err
	}
	return s.store.DeleteSubscription(ctx, id)
}

// Rotate replaces the secret; the previous one keeps signing for 24 hours,
// so receivers can switch without losing a delivery.
func (s *Service) Rotate(ctx context.Context, p *auth.Principal, id string) (*Subscription, string, error) {
	secret := newSecret()
	sub, err := s.modify(ctx, p, id, func(sub *Subscription, now time.Time) error {
		sub.OldSecretEnc, sub.OldSecretUntil = sub.SecretEnc, now.Add(rotationGrace)
		sub.SecretEnc = s.sealer.Seal(secret)
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return sub, secret, nil
}

// Pause stops deliveries; events meanwhile wait in the log as pending and
// go out on resume.
func (s *Service) Pause(ctx context.Context, p *auth.Principal, id string) (*Subscription, error) {
	return s.modify(ctx, p, id, func(sub *Subscription, _ time.Time) error {
		sub.Status, sub.DisabledReason = StatusDisabled, ReasonPaused
		return nil
	})
}

// Resume re-enables a paused or disabled subscription (one never verified
// goes back to pending_verification).
func (s *Service) Resume(ctx context.Context, p *auth.Principal, id string) (*Subscription, error) {
	return s.modify(ctx, p, id, func(sub *Subscription, _ time.Time) error {
		if !sub.CredentialLive {
			return apperr.Conflictf("credential_revoked", "", "the API key or authorization that made this webhook was revoked; create a new webhook")
		}
		if sub.Status != StatusDisabled {
			return nil
		}
		sub.Status, sub.DisabledReason, sub.FailingSince = StatusActive, "", nil
		if sub.Transport == TransportHTTPS && sub.VerifiedAt == nil {
			sub.Status = StatusPending
		}
		return nil
	})
}

// usable refuses work on a subscription whose credential is gone.
func usable(sub *Subscription) error {
	if !sub.CredentialLive {
		return apperr.Conflictf("credential_revoked", "", "the API key or authorization that made this webhook was revoked; create a new webhook")
	}
	return nil
}

// Verify sends the challenge now and answers the subscription with the
// attempt's outcome.
func (s *Service) Verify(ctx context.Context, p *auth.Principal, id string) (*Subscription, error) {
	sub, err := s.own(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if err := usable(sub); err != nil {
		return nil, err
	}
	if sub.Transport == TransportStream {
		return sub, nil
	}
	return s.verify(ctx, sub)
}

// Test sends an example event of kind to the endpoint now and answers the
// delivery with its attempt. Test deliveries use example data, never real
// records, and change nothing about the subscription's status.
func (s *Service) Test(ctx context.Context, p *auth.Principal, id, kind string) (*Delivery, error) {
	sub, err := s.own(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if err := usable(sub); err != nil {
		return nil, err
	}
	if !slices.Contains(outbox.Kinds, kind) && kind != KindFailing {
		return nil, apperr.InvalidParam("event_type", "unknown_event_type", "%q is not an event type of the API", kind)
	}
	now := s.clock.Now()
	body, evID, err := ExamplePayload(kind, now)
	if err != nil {
		return nil, err
	}
	d := &Delivery{ID: ids.New(ids.Delivery), SubscriptionID: sub.ID, EventID: evID, EventType: kind, Payload: body,
		Status: DeliveryPending, Test: true, NextAttemptAt: now, CreatedAt: now}
	if sub.Transport == TransportStream {
		// matchpoint listen picks it up like any other delivery.
		if err := s.store.AddTestDelivery(ctx, d, "", time.Time{}); err != nil {
			return nil, err
		}
		return d, nil
	}
	owner := s.manualOwner()
	if err := s.store.AddTestDelivery(ctx, d, owner, now.Add(s.cfg.Timeout+time.Minute)); err != nil {
		return nil, err
	}
	job := &Job{Delivery: *d, Sub: *sub, Body: body}
	out := s.attempt(ctx, job)
	out.Owner = owner
	out.Final = DeliveryFailed
	if out.Attempt.OK {
		out.Final = DeliverySucceeded
	}
	if _, err := s.store.RecordOutcomes(ctx, s.clock.Now(), []*Outcome{out}); err != nil {
		return nil, err
	}
	return s.store.Delivery(ctx, sub.ID, d.ID)
}

func (s *Service) manualOwner() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "manual-" + s.node + "-" + hex.EncodeToString(b[:])
}

// Deliveries pages through a subscription's delivery log, newest first.
func (s *Service) Deliveries(ctx context.Context, p *auth.Principal, id string, f DeliveryFilter, before string, limit int) ([]*Delivery, error) {
	if _, err := s.own(ctx, p, id); err != nil {
		return nil, err
	}
	if f.Status != "" && f.Status != DeliveryPending && f.Status != DeliverySucceeded && f.Status != DeliveryFailed {
		return nil, apperr.InvalidParam("status", "invalid_status", "status is pending, succeeded or failed")
	}
	if f.EventType != "" && !slices.Contains(outbox.Kinds, f.EventType) && f.EventType != KindFailing {
		return nil, apperr.InvalidParam("event_type", "unknown_event_type", "%q is not an event type of the API", f.EventType)
	}
	return s.store.ListDeliveries(ctx, id, f, before, limit)
}

// GetDelivery returns one delivery with every attempt.
func (s *Service) GetDelivery(ctx context.Context, p *auth.Principal, id, did string) (*Delivery, error) {
	if _, err := s.own(ctx, p, id); err != nil {
		return nil, err
	}
	if !ids.Valid(ids.Delivery, did) {
		return nil, apperr.NotFoundf("no delivery %q", did)
	}
	return s.store.Delivery(ctx, id, did)
}

// retriable refuses manual retries where a success would not be delivered
// the normal way either.
func retriable(sub *Subscription) error {
	if err := usable(sub); err != nil {
		return err
	}
	if sub.Transport == TransportStream {
		return apperr.Conflictf("not_applicable", "", "deliveries of a stream subscription are not retried")
	}
	switch {
	case sub.Status == StatusPending:
		return apperr.Conflictf("webhook_not_verified", "", "the endpoint has not answered the verification challenge yet; POST .../verify first")
	case sub.Status == StatusDisabled && sub.DisabledReason == ReasonPaused:
		return apperr.Conflictf("webhook_paused", "", "the webhook is paused; resume it first")
	}
	return nil
}

// Retry sends one delivery again now and answers it with the new attempt.
// A success reactivates a failing or disabled endpoint.
func (s *Service) Retry(ctx context.Context, p *auth.Principal, id, did string) (*Delivery, error) {
	sub, err := s.own(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if err := retriable(sub); err != nil {
		return nil, err
	}
	if !ids.Valid(ids.Delivery, did) {
		return nil, apperr.NotFoundf("no delivery %q", did)
	}
	owner := s.manualOwner()
	job, err := s.store.LeaseDelivery(ctx, id, did, owner, s.clock.Now(), s.cfg.Timeout+time.Minute)
	if err != nil {
		return nil, err
	}
	out := s.attempt(ctx, job)
	out.Owner = owner
	s.decideManual(out)
	if _, err := s.store.RecordOutcomes(ctx, s.clock.Now(), []*Outcome{out}); err != nil {
		return nil, err
	}
	return s.store.Delivery(ctx, id, did)
}

// RetryFailed queues every failed delivery created since t for one more
// attempt each; it answers how many.
func (s *Service) RetryFailed(ctx context.Context, p *auth.Principal, id string, since time.Time) (int64, error) {
	sub, err := s.own(ctx, p, id)
	if err != nil {
		return 0, err
	}
	if err := retriable(sub); err != nil {
		return 0, err
	}
	return s.store.RetryFailed(ctx, id, since, s.clock.Now())
}

// Stats returns a subscription's figures over the last hour and day.
func (s *Service) Stats(ctx context.Context, p *auth.Principal, id string) (hour, day *Stats, err error) {
	if _, err := s.own(ctx, p, id); err != nil {
		return nil, nil, err
	}
	now := s.clock.Now()
	if hour, err = s.store.Stats(ctx, id, now.Add(-time.Hour)); err != nil {
		return nil, nil, err
	}
	if day, err = s.store.Stats(ctx, id, now.Add(-24*time.Hour)); err != nil {
		return nil, nil, err
	}
	return hour, day, nil
}
