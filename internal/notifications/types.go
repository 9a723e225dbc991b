package notifications

import (
	"context"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
)

// Record is a notification as the centre keeps it.
type Record struct {
	notify.Notification
	// DeliveredAt is when an app first acknowledged receiving it.
	DeliveredAt *time.Time
}

// Cursor is a position in a person's centre, which lists by latest
// activity: a collapsed notification moves up when it absorbs another.
type Cursor struct {
	UpdatedAt time.Time
	ID        string
}

// Device is a push target of one account.
type Device struct {
	ID       string
	UserID   string
	Platform string // push.WebPush, push.APNs or push.FCM
	// Token is the Web Push endpoint, or the APNs or FCM token. It is a
	// credential to reach the device: never logged, never shown whole.
	Token      string
	P256DH     string // Web Push subscription keys
	Auth       string
	Name       string
	CreatedAt  time.Time
	LastUsedAt *time.Time
}

// Store is the storage the centre, preferences and devices need.
type Store interface {
	List(ctx context.Context, userID string, unread bool, after *Cursor, limit int) ([]*Record, error)
	Get(ctx context.Context, userID, id string) (*Record, error)
	MarkRead(ctx context.Context, userID, id string, now time.Time) (*Record, error)
	// MarkAllRead marks every unread notification at or below upTo in the
	// list (all of them when upTo is nil) and returns how many.
	MarkAllRead(ctx context.Context, userID string, upTo *Cursor, now time.Time) (int64, error)
	UnreadCount(ctx context.Context, userID string) (int64, error)
	// AckDelivered records the first acknowledgement with the event that
	// event builds; a later one changes nothing and reports first false.
	AckDelivered(ctx context.Context, userID, id string, now time.Time, event func(*Record) (*outbox.Event, error)) (rec *Record, first bool, err error)

	Settings(ctx context.Context, userID string) (*Settings, error)
	UpdateSettings(ctx context.Context, userID string, now time.Time, change func(*Settings) error) (*Settings, error)

	// RegisterDevice adds d, or refreshes the device with the same target
	// (which moves to d's account if another had it), and keeps at most
	// limit devices per account by dropping the least recently used.
	RegisterDevice(ctx context.Context, d *Device, limit int) (*Device, error)
	Devices(ctx context.Context, userID, after string, limit int) ([]*Device, error)
	DeleteDevice(ctx context.Context, userID, id string) error
}

// Job is one piece of queued push or email work, claimed with a lease.
type Job struct {
	Seq       int64
	Channel   string // ChannelPush or ChannelEmail
	Attempts  int    // failed attempts so far
	FirstSend bool   // never handed out before (the sent event is due)
	InCentre  bool   // the notification is in the centre (in_app on): reading it there makes its push pointless
	CreatedAt time.Time

	Notification Record
	Device       *Device // push
	Email        string  // email: the account's address
	Settings     Settings
}

// Action is what becomes of a job.
type Action int

const (
	Send  Action = iota // claim: lease it and send
	Drop                // claim or finish: delete it (read, turned off, too old, failed for good)
	Wait                // claim: not before Until (quiet hours)
	Done                // finish: the provider accepted it
	Retry               // finish: try again at Until
	Gone                // finish: the device is gone; remove it (and its jobs)
)

// Plan is the decision on a job being claimed.
type Plan struct {
	Action Action
	Until  time.Time     // Wait
	Event  *outbox.Event // Send: notification.sent, on the first hand-out
}

// Outcome is the result of a sent job.
type Outcome struct {
	Seq      int64
	Action   Action // Done, Retry, Drop or Gone
	Until    time.Time
	Error    string // the last error, kept on a retried job
	DeviceID string
	At       time.Time
	Event    *outbox.Event // Done: notification.delivered
}

// JobStore is the queue the worker drains.
type JobStore interface {
	// ClaimJobs picks up to limit due jobs nobody holds, asks decide what
	// to do with each, and leases those to send to owner until now+lease,
	// all in one transaction.
	ClaimJobs(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int, decide func(*Job) Plan) ([]*Job, error)
	// FinishJobs records outcomes of jobs owner holds; one whose lease was
	// lost is left to the node that holds it now.
	FinishJobs(ctx context.Context, owner string, outcomes []Outcome) error
	// ReleaseJobs hands owner's leases back (a node stopping).
	ReleaseJobs(ctx context.Context, owner string) error
}
