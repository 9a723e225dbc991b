// Package webhooks delivers the platform's events to the HTTPS endpoints
// that accounts subscribe: subscriptions and their verification, signed
// delivery from the outbox with retries, failure handling, delivery logs and
// statistics, and the stream that "matchpoint listen" reads.
package webhooks

import (
	"context"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
)

// Statuses of a subscription (DECISIONS.md, Webhooks).
const (
	StatusPending  = "pending_verification"
	StatusActive   = "active"
	StatusFailing  = "failing"
	StatusDisabled = "disabled"
)

// Why a subscription is disabled.
const (
	ReasonPaused  = "paused"             // by its owner; resume undoes it
	ReasonGone    = "gone"               // the endpoint answered 410 Gone
	ReasonFailure = "failing"            // 5 days of continuous failure
	ReasonRevoked = "credential_revoked" // the key or authorization that made it was revoked
)

// Transports of a subscription.
const (
	TransportHTTPS  = "https"  // POSTed to the endpoint
	TransportStream = "stream" // read by "matchpoint listen" over a stream
)

// Subscription is a webhook endpoint.
type Subscription struct {
	ID     string
	UserID string // the account it belongs to
	// The credential that made it: an API key, or an OAuth grant of a client.
	APIKeyID, GrantID, ClientID string
	Scopes                      []string // the credential's scopes when it was made
	Admin                       bool     // Scopes holds admin
	Transport                   string
	URL                         string
	Events                      []string
	Description                 string
	Status                      string
	DisabledReason              string
	SecretEnc                   string
	OldSecretEnc                string
	OldSecretUntil              time.Time
	VerifyDueAt                 *time.Time
	VerifiedAt                  *time.Time
	Verification                *Verification // the last verification attempt
	FailingSince                *time.Time
	LastSeenAt                  *time.Time
	CreatedAt, UpdatedAt        time.Time

	// Read with the subscription: whether its credential still works, and
	// the current tier of the account paying for that credential.
	CredentialLive bool
	Tier           string
}

// Verification is the outcome of one challenge request.
type Verification struct {
	At         time.Time
	StatusCode int // 0: no answer
	Error      string
	Response   string // the start of the answer's body
}

// EffectiveStatus is the status shown: a subscription whose credential was
// revoked (or whose account is gone) is disabled, whatever its row says.
func (s *Subscription) EffectiveStatus() (status, reason string) {
	if !s.CredentialLive {
		return StatusDisabled, ReasonRevoked
	}
	return s.Status, s.DisabledReason
}

// paused subscriptions still get delivery rows: they wait as pending and go
// out on resume.
func (s *Subscription) paused() bool {
	return s.Status == StatusDisabled && s.DisabledReason == ReasonPaused
}

// reader is whom the subscription's deliveries are for.
func (s *Subscription) reader() Reader {
	return Reader{UserID: s.UserID, Admin: s.adminNow()}
}

// adminNow: the admin scope counts only while the paying account is
// Enterprise (a downgrade takes it away at once).
func (s *Subscription) adminNow() bool {
	return s.Admin && auth.TierAllows(auth.ScopeAdmin, s.Tier)
}

// sees reports whether the subscription may receive ev (DECISIONS.md: a
// caller never sees through a webhook what it could not read through the
// API): it asked for the kind, its credential is live, its scopes read the
// kind, and its account may read what the event is about, or it is an
// Enterprise admin.
func (s *Subscription) sees(ev *outbox.Event) bool {
	if !s.CredentialLive || !(s.Status == StatusActive || s.Status == StatusFailing || s.paused()) {
		return false
	}
	if ev.Type == KindFailing && s.Status != StatusActive {
		return false
	}
	// A subscription receives what happens after it is made, even when the
	// outbox hands it an older event that was still waiting.
	if ev.Created.Before(s.CreatedAt) {
		return false
	}
	return s.visible(ev)
}

// visible is sees without the status check: what the worker checks again
// when it sends (a credential revoked or an account downgraded meanwhile).
func (s *Subscription) visible(ev *outbox.Event) bool {
	if !s.CredentialLive {
		return false
	}
	if ev.Type == KindFailing {
		// Only the account's other active endpoints hear of a failing one.
		return s.UserID == ev.UserID && failingID(ev.Payload) != s.ID
	}
	admin := s.adminNow()
	if !Wants(s.Events, ev.Type) || !Readable(ev.Type, auth.ForTier(s.Scopes, s.Tier), admin) {
		return false
	}
	if admin {
		return true
	}
	for _, u := range ev.Audience {
		if u == s.UserID {
			return true
		}
	}
	return false
}

// Delivery is one event on its way to one subscription.
type Delivery struct {
	ID             string
	SubscriptionID string
	EventSeq       int64 // 0 for test deliveries
	EventID        string
	EventType      string
	Payload        []byte // test deliveries only
	Status         string // pending, succeeded, failed
	Manual, Test   bool
	Attempts       int
	NextAttemptAt  time.Time
	LastStatusCode int
	LastError      string
	CreatedAt      time.Time
	CompletedAt    *time.Time
	History        []Attempt
	// LeaseUntil, when set on a new delivery, leases it to the node that
	// writes it, which sends it at once without claiming it again.
	LeaseUntil time.Time
}

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
)

// Attempt is one try of a delivery.
type Attempt struct {
	Number      int
	StartedAt   time.Time
	Duration    time.Duration
	OK          bool
	StatusCode  int // 0: no answer
	Error       string
	Response    string
	NextRetryAt *time.Time
	Node        string
}

// Job is a claimed delivery with what sending it needs.
type Job struct {
	Delivery Delivery
	Sub      Subscription
	Body     []byte   // the envelope as recorded (or the test payload)
	Audience []string // the event's audience
}

// Outcome is what the worker decided after an attempt; the store applies it
// in one transaction with its other outcomes.
type Outcome struct {
	Job     *Job
	Owner   string // the lease holder that attempted it
	Attempt Attempt
	// Final is "" while retries remain, else succeeded or failed.
	Final string
	// Subscription transitions.
	Reactivate   bool   // a success: active again, failure clock reset
	StartClock   bool   // first failure since the last success
	Disable      string // a reason: gone (410) or failing (5 days)
	StartFailing bool   // retries exhausted: active -> failing, tell the owner
}

// Failing is a subscription that just became failing (its owner is told by
// the notification written in the same transaction).
type Failing struct {
	SubscriptionID, UserID, URL, LastError string
}

// DeliveryFilter narrows a delivery log.
type DeliveryFilter struct {
	Status, EventType string
	Since, Until      *time.Time
}

// Stats are counts and latencies of a subscription over a window.
type Stats struct {
	Pending, Succeeded, Failed int64 // deliveries created in the window, by status
	Attempts, OKAttempts       int64
	P50, P95, P99              time.Duration // attempt durations
}

// Target is what fan-out reads of a subscription.
type Target = Subscription

// Store is the persistence webhooks need.
type Store interface {
	CreateSubscription(ctx context.Context, s *Subscription) error
	Subscription(ctx context.Context, id string) (*Subscription, error)
	ListSubscriptions(ctx context.Context, userID, clientID, after string, limit int) ([]*Subscription, error)
	CountSubscriptions(ctx context.Context, userID string) (int, error)
	// ModifySubscription changes a subscription under a row lock.
	ModifySubscription(ctx context.Context, id string, fn func(s *Subscription) error) (*Subscription, error)
	DeleteSubscription(ctx context.Context, id string) error

	// ClaimEvents leases outbox events of the webhooks consumer;
	// ReleaseEvents hands this node's leases back.
	ClaimEvents(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]Claimed, error)
	ReleaseEvents(ctx context.Context, owner string) error
	// Targets returns the subscriptions that may receive an event whose
	// audience is among userIDs, or that hold the admin scope.
	Targets(ctx context.Context, userIDs []string) ([]*Subscription, error)
	// FanOut records deliveries and finishes the claimed outbox events in
	// one transaction; store.ErrLeaseLost if another node took them over.
	FanOut(ctx context.Context, owner string, seqs []int64, ds []*Delivery) error

	ClaimDeliveries(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int, skip []string) ([]*Job, error)
	ExtendLeases(ctx context.Context, owner string, until time.Time) error
	ReleaseDeliveries(ctx context.Context, owner string) error
	RecordOutcomes(ctx context.Context, now time.Time, os []*Outcome) ([]Failing, error)
	LeaseDelivery(ctx context.Context, subID, id, owner string, now time.Time, lease time.Duration) (*Job, error)
	AddTestDelivery(ctx context.Context, d *Delivery, owner string, until time.Time) error

	TakeVerifications(ctx context.Context, now time.Time, limit int) ([]*Subscription, error)
	RecordVerification(ctx context.Context, id, url string, v *Verification, verified bool) (*Subscription, error)

	ListDeliveries(ctx context.Context, subID string, f DeliveryFilter, before string, limit int) ([]*Delivery, error)
	Delivery(ctx context.Context, subID, id string) (*Delivery, error)
	RetryFailed(ctx context.Context, subID string, since, now time.Time) (int64, error)
	Stats(ctx context.Context, subID string, since time.Time) (*Stats, error)

	ClaimStream(ctx context.Context, subID, owner string, now time.Time, lease time.Duration, limit int) ([]*Job, error)
	TouchStream(ctx context.Context, subID string, now time.Time) error
	DeleteStaleStreams(ctx context.Context, before time.Time) (int64, error)
	PurgeDeliveries(ctx context.Context, before time.Time) (int64, error)
}

// Claimed is a leased outbox event.
type Claimed struct {
	Seq   int64
	Event outbox.Event
}
