package httpapi

import (
	"context"
	"net/http"
	"net/url"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/notifications"
	"github.com/matchpoint-api/matchpoint/internal/notifications/push"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// Device is a registered push target. The target itself (a Web Push
// endpoint, a device token) is a credential and is never shown whole.
type Device struct {
	Object   string `json:"object" enum:"device"`
	ID       string `json:"id" example:"dev_068b2k4sq1ytzgq0bmf0qv7y3g"`
	Platform string `json:"platform" enum:"webpush,apns,fcm" example:"webpush"`
	Name     string `json:"name" example:"Firefox on the laptop"`
	// PushService is the origin of a Web Push endpoint.
	PushService string  `json:"push_service,omitempty" example:"https://updates.push.services.mozilla.com" doc:"Web Push: the push service's origin"`
	TokenHint   string  `json:"token_hint,omitempty" example:"…3a4b5c6d" doc:"APNs and FCM: the token's last 8 characters"`
	CreatedAt   string  `json:"created_at" format:"date-time"`
	LastUsedAt  *string `json:"last_used_at" format:"date-time" doc:"Last push the provider accepted"`
}

func deviceOf(d *notifications.Device) Device {
	out := Device{Object: "device", ID: d.ID, Platform: d.Platform, Name: d.Name, CreatedAt: wire.Time(d.CreatedAt), LastUsedAt: wire.OptTime(d.LastUsedAt)}
	if d.Platform == push.WebPush {
		if u, err := url.Parse(d.Token); err == nil {
			out.PushService = u.Scheme + "://" + u.Host
		}
	} else if len(d.Token) > 8 {
		out.TokenHint = "…" + d.Token[len(d.Token)-8:]
	}
	return out
}

// SubscriptionKeys are a Web Push subscription's keys.
type SubscriptionKeys struct {
	P256DH string `json:"p256dh" maxLength:"200" example:"BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4" doc:"The browser's P-256 public key, base64url"`
	Auth   string `json:"auth" maxLength:"64" example:"BTBZMqHH6r4Tts7J_aSIgg" doc:"The 16-byte authentication secret, base64url"`
}

// PushSubscription is a browser's PushSubscription, as its toJSON() gives it.
type PushSubscription struct {
	Endpoint       string           `json:"endpoint" maxLength:"2048" example:"https://updates.push.services.mozilla.com/wpush/v2/gAAAAABk..." doc:"An https URL of a push service"`
	ExpirationTime NullableNumber   `json:"expirationTime,omitempty" doc:"Ignored: a subscription that ends is removed when its push service says so"`
	Keys           SubscriptionKeys `json:"keys"`
}

// RegisterDeviceRequest is the body of register-device.
type RegisterDeviceRequest struct {
	Platform     string            `json:"platform" enum:"webpush,apns,fcm" example:"webpush"`
	Subscription *PushSubscription `json:"subscription,omitempty" doc:"Web Push: the subscription made with the key of GET /v1/push/vapid-public-key"`
	Token        string            `json:"token,omitempty" maxLength:"4096" example:"a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90" doc:"APNs: the device token (hex); FCM: the registration token"`
	Name         string            `json:"name,omitempty" maxLength:"100" example:"Firefox on the laptop" doc:"A label for the list of devices"`
}

func (s *server) registerDevices() {
	tags := []string{"Notifications"}
	huma.Register(s.api, huma.Operation{
		OperationID: "register-device", Method: http.MethodPost, Path: "/v1/users/me/devices", Tags: tags,
		Summary: "Register a push device",
		Description: "Registers a Web Push subscription, an APNs device token or an FCM registration token for your pushes. Registering the same " +
			"target again updates it (same id); a target registered by another account moves to yours. An account keeps " +
			"20 devices: one more drops the least recently used. A target its provider reports gone is removed. Scope: write.",
		Security:      requires(auth.ScopeWrite),
		DefaultStatus: http.StatusCreated,
	}, func(ctx context.Context, in *struct{ Body RegisterDeviceRequest }) (*struct {
		Location string `header:"Location"`
		Body     Device
	}, error) {
		b := in.Body
		r := notifications.DeviceRegistration{Platform: b.Platform, Token: b.Token, Name: b.Name}
		if b.Subscription != nil {
			r.Endpoint, r.P256DH, r.Auth = b.Subscription.Endpoint, b.Subscription.Keys.P256DH, b.Subscription.Keys.Auth
		} else if b.Platform == push.WebPush {
			return nil, apperr.InvalidParam("subscription", "invalid_subscription", "a Web Push device needs its subscription")
		}
		d, err := s.notifications.RegisterDevice(ctx, principalOf(ctx).UserID, r)
		if err != nil {
			return nil, err
		}
		return &struct {
			Location string `header:"Location"`
			Body     Device
		}{Location: "/v1/users/me/devices/" + d.ID, Body: deviceOf(d)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "list-devices", Method: http.MethodGet, Path: "/v1/users/me/devices", Tags: tags,
		Summary: "List your push devices", Description: "Oldest first. Scope: read.", Security: requires(auth.ScopeRead),
	}, func(ctx context.Context, in *struct{ ListParams }) (*struct{ Body List[Device] }, error) {
		ds, err := s.notifications.Devices(ctx, principalOf(ctx).UserID, in.Cursor, in.Limit+1)
		if err != nil {
			return nil, err
		}
		return &struct{ Body List[Device] }{Body: listOf(ds, in.Limit, func(d *notifications.Device) string { return d.ID }, deviceOf)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "delete-device", Method: http.MethodDelete, Path: "/v1/users/me/devices/{id}", Tags: tags,
		Summary:       "Remove a push device",
		Description:   "Pushes still queued for it are dropped. Scope: write.",
		Security:      requires(auth.ScopeWrite),
		DefaultStatus: http.StatusNoContent,
	}, func(ctx context.Context, in *struct {
		ID string `path:"id" maxLength:"64" example:"dev_068b2k4sq1ytzgq0bmf0qv7y3g"`
	}) (*struct{}, error) {
		return nil, s.notifications.DeleteDevice(ctx, principalOf(ctx).UserID, in.ID)
	})
}
