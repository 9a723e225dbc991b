package notifications

import (
	"context"
	"crypto/ecdh"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/egress"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/notifications/push"
	"github.com/matchpoint-api/matchpoint/internal/notifications/push/apns"
	"github.com/matchpoint-api/matchpoint/internal/notifications/push/fcm"
	"github.com/matchpoint-api/matchpoint/internal/notifications/push/webpush"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
)

// Config configures the service.
type Config struct {
	Store          Store
	Clock          clock.Clock
	BaseURL        string // the service's public address, for unsubscribe links
	UnsubscribeKey []byte // signs unsubscribe links (an instance key)
	VAPIDPublicKey string
	// Platforms are the push platforms configured on this deployment; a
	// device of another is refused when registered.
	Platforms []string
	// Egress checks Web Push endpoints when they are registered (they are
	// checked again at every connection).
	Egress     egress.Policy
	MaxDevices int // per account; default 20
}

// DefaultMaxDevices is how many push targets an account keeps; registering
// one more drops the least recently used (browsers renew subscriptions and
// forget to say so).
const DefaultMaxDevices = 20

// Service is the notification centre, preferences and devices.
type Service struct {
	cfg    Config
	signer signer
}

// NewService returns the service.
func NewService(cfg Config) *Service {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.MaxDevices <= 0 {
		cfg.MaxDevices = DefaultMaxDevices
	}
	return &Service{cfg: cfg, signer: signer{key: cfg.UnsubscribeKey}}
}

// EncodeCursor is the next_cursor of a page that ended with r.
func EncodeCursor(r *Record) string {
	return strconv.FormatInt(r.UpdatedAt.UnixMicro(), 36) + "." + r.ID
}

var errCursor = apperr.InvalidParam("cursor", "invalid_cursor", "cursor is not one this list returned")

func parseCursor(s string) (*Cursor, error) {
	if s == "" {
		return nil, nil
	}
	ts, id, ok := strings.Cut(s, ".")
	us, err := strconv.ParseInt(ts, 36, 64)
	if !ok || err != nil || us < 0 || !ids.Valid(ids.Notification, id) {
		return nil, errCursor
	}
	return &Cursor{UpdatedAt: time.UnixMicro(us).UTC(), ID: id}, nil
}

func checkID(id string) error {
	if !ids.Valid(ids.Notification, id) {
		return apperr.NotFoundf("no notification %q", id)
	}
	return nil
}

// List pages through the centre, latest activity first.
func (s *Service) List(ctx context.Context, userID string, unread bool, cursor string, limit int) ([]*Record, error) {
	after, err := parseCursor(cursor)
	if err != nil {
		return nil, err
	}
	return s.cfg.Store.List(ctx, userID, unread, after, limit)
}

// Get returns one of the user's notifications.
func (s *Service) Get(ctx context.Context, userID, id string) (*Record, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	return s.cfg.Store.Get(ctx, userID, id)
}

// Read marks one notification read (reading it again changes nothing). A
// push still waiting for it is then not sent.
func (s *Service) Read(ctx context.Context, userID, id string) (*Record, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	return s.cfg.Store.MarkRead(ctx, userID, id, s.cfg.Clock.Now())
}

// ReadAll marks read every notification up to upTo (an id) in the list's
// order: that one and everything listed after it, which is what a client
// had seen when upTo was at the top. Empty upTo: all of them.
func (s *Service) ReadAll(ctx context.Context, userID, upTo string) (int64, error) {
	var c *Cursor
	if upTo != "" {
		if !ids.Valid(ids.Notification, upTo) {
			return 0, apperr.InvalidParam("up_to", "invalid_notification_id", "up_to is not a notification id")
		}
		r, err := s.cfg.Store.Get(ctx, userID, upTo)
		if apperr.IsKind(err, apperr.NotFound) {
			return 0, apperr.InvalidParam("up_to", "invalid_notification_id", "up_to is not one of your notifications")
		}
		if err != nil {
			return 0, err
		}
		c = &Cursor{UpdatedAt: r.UpdatedAt, ID: r.ID}
	}
	return s.cfg.Store.MarkAllRead(ctx, userID, c, s.cfg.Clock.Now())
}

// UnreadCount counts unread notifications of the centre.
func (s *Service) UnreadCount(ctx context.Context, userID string) (int64, error) {
	return s.cfg.Store.UnreadCount(ctx, userID)
}

// AckDelivered records that an app received the notification: the first
// acknowledgement records notification.delivered.
func (s *Service) AckDelivered(ctx context.Context, userID, id string) (*Record, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	now := s.cfg.Clock.Now()
	r, _, err := s.cfg.Store.AckDelivered(ctx, userID, id, now, func(r *Record) (*outbox.Event, error) { return AckEvent(now, r) })
	return r, err
}

// Settings returns the user's preferences.
func (s *Service) Settings(ctx context.Context, userID string) (*Settings, error) {
	return s.cfg.Store.Settings(ctx, userID)
}

// UpdateSettings applies p.
func (s *Service) UpdateSettings(ctx context.Context, userID string, p Patch) (*Settings, error) {
	return s.cfg.Store.UpdateSettings(ctx, userID, s.cfg.Clock.Now(), func(st *Settings) error { return st.Apply(p) })
}

// UnsubscribeURL is the link that turns kind's emails off for userID.
func (s *Service) UnsubscribeURL(userID, kind string) string {
	return UnsubscribeURL(s.cfg.BaseURL, s.signer.token(userID, kind))
}

// CheckUnsubscribe reads a token without acting on it (the page that asks).
func (s *Service) CheckUnsubscribe(token string) (kind string, err error) {
	_, kind, err = s.signer.check(token)
	return kind, err
}

// Unsubscribe turns email off for the token's kind and account.
func (s *Service) Unsubscribe(ctx context.Context, token string) (kind string, err error) {
	userID, kind, err := s.signer.check(token)
	if err != nil {
		return "", err
	}
	off := false
	_, err = s.cfg.Store.UpdateSettings(ctx, userID, s.cfg.Clock.Now(), func(st *Settings) error {
		return st.Apply(Patch{Kinds: map[string]Override{kind: {Email: &off}}})
	})
	if apperr.IsKind(err, apperr.NotFound) {
		return "", errBadToken // the account is gone
	}
	return kind, err
}

// VAPIDPublicKey is the application server key for Web Push subscriptions.
func (s *Service) VAPIDPublicKey() string { return s.cfg.VAPIDPublicKey }

// Platforms are the push platforms this deployment sends to.
func (s *Service) Platforms() []string { return s.cfg.Platforms }

// DeviceRegistration is what a client sends to register a push target.
type DeviceRegistration struct {
	Platform string
	// Web Push: the PushSubscription's endpoint and keys.
	Endpoint, P256DH, Auth string
	// APNs device token (hex) or FCM registration token.
	Token string
	Name  string
}

// RegisterDevice checks and stores a push target for userID.
func (s *Service) RegisterDevice(ctx context.Context, userID string, r DeviceRegistration) (*Device, error) {
	if !slices.Contains(push.Platforms, r.Platform) {
		return nil, apperr.InvalidParam("platform", "invalid_platform", "platform is webpush, apns or fcm")
	}
	if !slices.Contains(s.cfg.Platforms, r.Platform) {
		return nil, apperr.InvalidParam("platform", "push_unavailable", "this deployment does not send to %s", r.Platform)
	}
	name := strings.TrimSpace(r.Name)
	if len(name) > 100 || strings.ContainsFunc(name, unicode.IsControl) {
		return nil, apperr.InvalidParam("name", "invalid_text", "name is one line of at most 100 characters")
	}
	d := &Device{ID: ids.New(ids.Device), UserID: userID, Platform: r.Platform, Name: name, CreatedAt: s.cfg.Clock.Now()}
	switch r.Platform {
	case push.WebPush:
		if r.Token != "" {
			return nil, apperr.InvalidParam("token", "unexpected_field", "a Web Push device is a subscription, not a token")
		}
		if len(r.Endpoint) > 2048 {
			return nil, apperr.InvalidParam("subscription.endpoint", "invalid_endpoint", "endpoint is at most 2048 characters")
		}
		if err := s.cfg.Egress.CheckURL(r.Endpoint); err != nil {
			return nil, apperr.InvalidParam("subscription.endpoint", "invalid_endpoint", "endpoint %s", err.Error())
		}
		key, err := webpush.DecodeKey(r.P256DH)
		if err == nil {
			_, err = ecdh.P256().NewPublicKey(key)
		}
		if err != nil {
			return nil, apperr.InvalidParam("subscription.keys.p256dh", "invalid_subscription_key", "p256dh is an uncompressed P-256 public key, base64url")
		}
		auth, err := webpush.DecodeKey(r.Auth)
		if err != nil || len(auth) != 16 {
			return nil, apperr.InvalidParam("subscription.keys.auth", "invalid_subscription_key", "auth is 16 bytes, base64url")
		}
		d.Token, d.P256DH, d.Auth = r.Endpoint, b64.EncodeToString(key), b64.EncodeToString(auth)
	case push.APNs, push.FCM:
		if r.Endpoint != "" || r.P256DH != "" || r.Auth != "" {
			return nil, apperr.InvalidParam("subscription", "unexpected_field", "only Web Push devices have a subscription")
		}
		ok := apns.ValidToken(r.Token)
		if r.Platform == push.FCM {
			ok = fcm.ValidToken(r.Token)
		}
		if !ok {
			return nil, apperr.InvalidParam("token", "invalid_device_token", "token is not an %s token", r.Platform)
		}
		d.Token = r.Token
		if r.Platform == push.APNs {
			d.Token = strings.ToLower(r.Token)
		}
	}
	return s.cfg.Store.RegisterDevice(ctx, d, s.cfg.MaxDevices)
}

// Devices pages through the user's devices, oldest first.
func (s *Service) Devices(ctx context.Context, userID, after string, limit int) ([]*Device, error) {
	if after != "" && !ids.Valid(ids.Device, after) {
		return nil, errCursor
	}
	return s.cfg.Store.Devices(ctx, userID, after, limit)
}

// DeleteDevice removes a device; pushes still queued for it are dropped.
func (s *Service) DeleteDevice(ctx context.Context, userID, id string) error {
	if !ids.Valid(ids.Device, id) {
		return apperr.NotFoundf("no device %q", id)
	}
	return s.cfg.Store.DeleteDevice(ctx, userID, id)
}
