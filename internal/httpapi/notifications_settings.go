package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"html/template"
	"net/http"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/notifications"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// ChannelChoice is whether each channel is on for a kind.
type ChannelChoice struct {
	InApp bool `json:"in_app" doc:"In the notification centre and on the stream"`
	Push  bool `json:"push" doc:"Pushed to every registered device"`
	Email bool `json:"email" doc:"Mailed to the account's address"`
}

// QuietHours is a daily window without pushes, in the profile's time zone.
type QuietHours struct {
	Start string `json:"start" pattern:"^[0-2][0-9]:[0-5][0-9]$" example:"22:00" doc:"HH:MM, local time"`
	End   string `json:"end" pattern:"^[0-2][0-9]:[0-5][0-9]$" example:"07:00" doc:"HH:MM, local time; before start for a window across midnight"`
}

// NotificationSettings are the caller's notification preferences.
type NotificationSettings struct {
	Object string                   `json:"object" enum:"notification_settings"`
	Kinds  map[string]ChannelChoice `json:"kinds" example:"{\"message.new\":{\"in_app\":true,\"push\":true,\"email\":false}}" doc:"Every kind with its channels; the defaults apply to what you never changed"`
	// QuietHours is null when there are none.
	QuietHours    *QuietHours `json:"quiet_hours" doc:"Pushes that fall in this daily window wait until it ends (and are not sent if the notification was read by then); null: none"`
	Timezone      string      `json:"timezone" example:"Europe/Paris" doc:"The profile's time zone, which quiet hours are read in (change it with PATCH /v1/users/me)"`
	PushPlatforms []string    `json:"push_platforms" example:"[\"webpush\",\"apns\"]" doc:"The push platforms this deployment sends to"`
	UpdatedAt     *string     `json:"updated_at" format:"date-time" doc:"null: never changed"`
}

// ChannelPatch changes some channels of a kind.
type ChannelPatch struct {
	InApp *bool `json:"in_app,omitempty"`
	Push  *bool `json:"push,omitempty"`
	Email *bool `json:"email,omitempty"`
}

// NullableQuietHours is a PATCH field that may be absent, null (none) or a window.
type NullableQuietHours struct {
	Set   bool
	Value *QuietHours
}

// UnmarshalJSON records that the field was sent, and whether as null.
func (n *NullableQuietHours) UnmarshalJSON(b []byte) error {
	n.Set = true
	if string(b) == "null" {
		n.Value = nil
		return nil
	}
	n.Value = &QuietHours{}
	return json.Unmarshal(b, n.Value)
}

// Schema tells Huma the field is a nullable QuietHours.
func (NullableQuietHours) Schema(r huma.Registry) *huma.Schema {
	hhmm := "^[0-2][0-9]:[0-5][0-9]$"
	return &huma.Schema{Type: "object", Nullable: true, AdditionalProperties: false, Required: []string{"start", "end"},
		Description: "HH:MM to HH:MM in your time zone; null turns quiet hours off",
		Properties: map[string]*huma.Schema{
			"start": {Type: "string", Pattern: hhmm, Examples: []any{"22:00"}},
			"end":   {Type: "string", Pattern: hhmm, Examples: []any{"07:00"}},
		}}
}

// NotificationSettingsPatch is the body of update-notification-settings.
type NotificationSettingsPatch struct {
	Kinds      map[string]ChannelPatch `json:"kinds,omitempty" example:"{\"message.new\":{\"email\":true}}" doc:"Channels to change, by kind; those not sent keep their value"`
	QuietHours NullableQuietHours      `json:"quiet_hours,omitempty"`
}

func (s *server) settingsOf(st *notifications.Settings) NotificationSettings {
	out := NotificationSettings{Object: "notification_settings", Kinds: map[string]ChannelChoice{}, Timezone: st.Timezone,
		PushPlatforms: slices.Clone(s.notifications.Platforms()), UpdatedAt: wire.OptTime(st.UpdatedAt)}
	if out.PushPlatforms == nil {
		out.PushPlatforms = []string{}
	}
	for _, k := range notify.Kinds {
		out.Kinds[k] = ChannelChoice(st.Choice(k))
	}
	if q := st.QuietHours; q != nil {
		out.QuietHours = &QuietHours{Start: q.Start, End: q.End}
	}
	return out
}

func (s *server) registerNotificationSettings() {
	tags := []string{"Notifications"}
	defaults := make([]string, 0, len(notify.Kinds))
	for _, k := range notify.Kinds {
		c := notifications.Defaults[k]
		var on []string
		for _, ch := range notifications.Channels {
			if c.On(ch) {
				on = append(on, ch)
			}
		}
		defaults = append(defaults, "`"+k+"`: "+strings.Join(on, ", "))
	}
	huma.Register(s.api, huma.Operation{
		OperationID: "get-notification-settings", Method: http.MethodGet, Path: "/v1/users/me/notification-settings", Tags: tags,
		Summary: "Your notification settings",
		Description: "Every kind with its channels (in_app, push, email) and your quiet hours. Defaults: " + strings.Join(defaults, "; ") +
			". No quiet hours. Scope: read.",
		Security: requires(auth.ScopeRead),
	}, func(ctx context.Context, _ *struct{}) (*struct{ Body NotificationSettings }, error) {
		st, err := s.notifications.Settings(ctx, principalOf(ctx).UserID)
		if err != nil {
			return nil, err
		}
		return &struct{ Body NotificationSettings }{Body: s.settingsOf(st)}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "update-notification-settings", Method: http.MethodPatch, Path: "/v1/users/me/notification-settings", Tags: tags,
		Summary:     "Change your notification settings",
		Description: "Changes the channels sent, per kind, and the quiet hours (null turns them off); the rest stays. Quiet hours hold pushes, not the centre or email. Scope: write.",
		Security:    requires(auth.ScopeWrite),
	}, func(ctx context.Context, in *struct{ Body NotificationSettingsPatch }) (*struct{ Body NotificationSettings }, error) {
		p := notifications.Patch{Kinds: map[string]notifications.Override{}}
		for k, c := range in.Body.Kinds {
			p.Kinds[k] = notifications.Override(c)
		}
		if q := in.Body.QuietHours; q.Set {
			p.QuietHours.Set = true
			if q.Value != nil {
				p.QuietHours.Value = &notifications.QuietHours{Start: q.Value.Start, End: q.Value.End}
			}
		}
		st, err := s.notifications.UpdateSettings(ctx, principalOf(ctx).UserID, p)
		if err != nil {
			return nil, err
		}
		return &struct{ Body NotificationSettings }{Body: s.settingsOf(st)}, nil
	})
}

// EmailUnsubscribe says which emails were turned off.
type EmailUnsubscribe struct {
	Object string `json:"object" enum:"email_unsubscribe"`
	Kind   string `json:"kind" example:"message.new"`
	Email  bool   `json:"email" example:"false" doc:"Email for this kind, now off"`
}

// UnsubscribeParams name the link's token.
type UnsubscribeParams struct {
	Token string `query:"token" required:"true" maxLength:"256" doc:"The token of the email's link"`
}

var unsubscribePage = template.Must(template.New("unsubscribe").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Unsubscribe: Matchpoint</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 32rem; margin: 3rem auto; padding: 0 1rem">
{{if .Done}}<h1>Unsubscribed</h1><p>You will no longer get emails about {{.Label}}. Other notifications are unchanged; manage them in the app.</p>
{{else}}<h1>Unsubscribe?</h1><p>Stop emails about {{.Label}} from Matchpoint. You still see these notifications in the app.</p>
<form method="post" action="{{.Action}}"><input type="hidden" name="List-Unsubscribe" value="One-Click">
<button type="submit">Unsubscribe</button></form>{{end}}
</body></html>
`))

func page(label, action string, done bool) []byte {
	var b bytes.Buffer
	_ = unsubscribePage.Execute(&b, map[string]any{"Label": label, "Action": action, "Done": done})
	return b.Bytes()
}

type htmlOut struct {
	ContentType    string `header:"Content-Type"`
	Security       string `header:"Content-Security-Policy"`
	ReferrerPolicy string `header:"Referrer-Policy"`
	Body           []byte
}

func htmlPage(b []byte) *htmlOut {
	// The page holds the token in its form: no scripts, no referrer.
	return &htmlOut{ContentType: "text/html; charset=utf-8", Security: "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
		ReferrerPolicy: "no-referrer", Body: b}
}

func (s *server) registerUnsubscribe() {
	tags := []string{"Notifications"}
	huma.Register(s.api, huma.Operation{
		OperationID: "unsubscribe-email", Method: http.MethodPost, Path: "/v1/notifications/unsubscribe", Tags: tags,
		Summary: "Unsubscribe from a kind of email",
		Description: "The target of the `List-Unsubscribe` header of every notification email, for one-click unsubscription (RFC 8058: the mail " +
			"client posts `List-Unsubscribe=One-Click`), and of the form of the page the email's link opens. The signed token names the account " +
			"and the kind; no credential is needed. Turns email off for that kind. Answers JSON (EmailUnsubscribe), or a page to a browser's form.",
		Metadata: public(),
		// The body says nothing the token does not: it is documented, not read.
		RequestBody: &huma.RequestBody{Description: "`List-Unsubscribe=One-Click`, as RFC 8058 mail clients send it; may be empty.",
			// A string schema, so that Huma leaves the body unread.
			Content: map[string]*huma.MediaType{"application/x-www-form-urlencoded": {Schema: &huma.Schema{Type: "string",
				Examples: []any{"List-Unsubscribe=One-Click"}}}}},
	}, func(ctx context.Context, in *struct {
		Token  string `query:"token" required:"true" maxLength:"256" doc:"The token of the email's link"`
		Accept string `header:"Accept"`
	}) (*struct {
		ContentType string `header:"Content-Type"`
		Body        []byte
	}, error) {
		kind, err := s.notifications.Unsubscribe(ctx, in.Token)
		if err != nil {
			return nil, err
		}
		if strings.Contains(in.Accept, "text/html") {
			p := htmlPage(page(notifications.KindLabel(kind), "", true))
			return &struct {
				ContentType string `header:"Content-Type"`
				Body        []byte
			}{p.ContentType, p.Body}, nil
		}
		b, _ := json.Marshal(EmailUnsubscribe{Object: "email_unsubscribe", Kind: kind, Email: false})
		return &struct {
			ContentType string `header:"Content-Type"`
			Body        []byte
		}{"application/json", b}, nil
	})

	huma.Register(s.api, huma.Operation{
		OperationID: "show-unsubscribe-page", Method: http.MethodGet, Path: "/v1/notifications/unsubscribe", Tags: tags,
		Summary:     "The unsubscribe page of an email's link",
		Description: "An HTML page asking to confirm; opening it changes nothing (link scanners open links), its button posts to unsubscribe-email.",
		Metadata:    public(),
	}, func(ctx context.Context, in *UnsubscribeParams) (*htmlOut, error) {
		kind, err := s.notifications.CheckUnsubscribe(in.Token)
		if err != nil {
			return nil, err
		}
		return htmlPage(page(notifications.KindLabel(kind), "/v1/notifications/unsubscribe?token="+template.URLQueryEscaper(in.Token), false)), nil
	})
}
