// Package notifications is the notification centre and everything that
// tells people about their notifications outside the API: preferences per
// kind and channel, quiet hours, push devices, the push queue worker with
// its providers (Web Push, APNs, FCM) and email.
//
// Every domain writes its notification records with the store's
// addNotification in the transaction of the change; that same call applies
// the recipient's preferences and queues push and email work in the same
// transaction. The worker here sends from that queue, never in the request.
package notifications

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/notify"
)

// Channels a notification can reach a person through.
const (
	ChannelInApp = "in_app" // the notification centre (GET /v1/notifications) and the stream
	ChannelPush  = "push"   // every registered device
	ChannelEmail = "email"  // the account's email address
)

// Channels lists every channel.
var Channels = []string{ChannelInApp, ChannelPush, ChannelEmail}

// Choice is whether each channel is on for one kind.
type Choice struct {
	InApp bool `json:"in_app"`
	Push  bool `json:"push"`
	Email bool `json:"email"`
}

// On reports whether channel is on.
func (c Choice) On(channel string) bool {
	switch channel {
	case ChannelInApp:
		return c.InApp
	case ChannelPush:
		return c.Push
	case ChannelEmail:
		return c.Email
	}
	return false
}

// Defaults are the channels of every kind for someone who changed nothing.
// Everything reaches the centre. Push is on for what wants an answer or
// changes plans: messages, match requests and acceptances, changes to
// events, waitlist promotions and reminders, verification and moderation
// decisions; a declined or expired request is only in the centre. Email is
// off except for a webhook endpoint failing (the developer may not have the
// app open) and an ID verification decided.
var Defaults = map[string]Choice{
	notify.KindMessage:             {InApp: true, Push: true},
	notify.KindMatchRequested:      {InApp: true, Push: true},
	notify.KindMatchAccepted:       {InApp: true, Push: true},
	notify.KindMatchDeclined:       {InApp: true},
	notify.KindMatchExpired:        {InApp: true},
	notify.KindEventUpdated:        {InApp: true, Push: true},
	notify.KindEventCancelled:      {InApp: true, Push: true},
	notify.KindEventPromoted:       {InApp: true, Push: true},
	notify.KindEventReminder:       {InApp: true, Push: true},
	notify.KindWebhookFailing:      {InApp: true, Email: true},
	notify.KindVerificationDecided: {InApp: true, Push: true, Email: true},
	notify.KindModerationDecision:  {InApp: true, Push: true},
}

// fallback is the choice for a kind added to notify without a default here.
var fallback = Choice{InApp: true, Push: true}

// Override is what a user changed for one kind; nil fields keep the default.
type Override struct {
	InApp *bool `json:"in_app,omitempty"`
	Push  *bool `json:"push,omitempty"`
	Email *bool `json:"email,omitempty"`
}

// Settings are one user's preferences: the overrides of the defaults and
// the quiet hours, plus the profile's time zone they are read in.
type Settings struct {
	Overrides  map[string]Override
	QuietHours *QuietHours // nil: none
	Timezone   string      // IANA, from the profile
	UpdatedAt  *time.Time  // nil: never changed
}

// Choice returns the channels of kind.
func (s *Settings) Choice(kind string) Choice {
	c, ok := Defaults[kind]
	if !ok {
		c = fallback
	}
	if o, ok := s.Overrides[kind]; ok {
		if o.InApp != nil {
			c.InApp = *o.InApp
		}
		if o.Push != nil {
			c.Push = *o.Push
		}
		if o.Email != nil {
			c.Email = *o.Email
		}
	}
	return c
}

// DecodeOverrides reads the stored overrides; unknown kinds (a kind that was
// retired) are dropped.
func DecodeOverrides(raw string) (map[string]Override, error) {
	out := map[string]Override{}
	if raw == "" {
		return out, nil
	}
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		return nil, fmt.Errorf("notifications: stored settings: %w", err)
	}
	for k := range out {
		if !slices.Contains(notify.Kinds, k) {
			delete(out, k)
		}
	}
	return out, nil
}

// Patch changes some preferences.
type Patch struct {
	Kinds map[string]Override
	// QuietHours: Set false keeps them; Set with nil clears them.
	QuietHours struct {
		Set   bool
		Value *QuietHours
	}
}

// Apply checks p and applies it to s.
func (s *Settings) Apply(p Patch) error {
	for kind, o := range p.Kinds {
		if !slices.Contains(notify.Kinds, kind) {
			return apperr.InvalidParam("kinds."+kind, "unknown_notification_kind", "%q is not a notification kind", kind)
		}
		cur := s.Overrides[kind]
		if o.InApp != nil {
			cur.InApp = o.InApp
		}
		if o.Push != nil {
			cur.Push = o.Push
		}
		if o.Email != nil {
			cur.Email = o.Email
		}
		// An override equal to the default is forgotten, so a later change
		// of the default reaches those who never really chose.
		d, ok := Defaults[kind]
		if !ok {
			d = fallback
		}
		if cur.InApp != nil && *cur.InApp == d.InApp {
			cur.InApp = nil
		}
		if cur.Push != nil && *cur.Push == d.Push {
			cur.Push = nil
		}
		if cur.Email != nil && *cur.Email == d.Email {
			cur.Email = nil
		}
		if s.Overrides == nil {
			s.Overrides = map[string]Override{}
		}
		if cur.InApp == nil && cur.Push == nil && cur.Email == nil {
			delete(s.Overrides, kind)
		} else {
			s.Overrides[kind] = cur
		}
	}
	if p.QuietHours.Set {
		if q := p.QuietHours.Value; q != nil {
			if err := q.Check(); err != nil {
				return err
			}
		}
		s.QuietHours = p.QuietHours.Value
	}
	return nil
}

// EncodeOverrides is the stored form of the overrides.
func EncodeOverrides(o map[string]Override) string {
	if len(o) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(o) // a map of plain structs always encodes
	return string(b)
}
