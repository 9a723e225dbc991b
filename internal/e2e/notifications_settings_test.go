package e2e

import (
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// notificationSettings is the typed answer of the settings operations.
type notificationSettings struct {
	Object string `json:"object"`
	Kinds  map[string]struct {
		InApp bool `json:"in_app"`
		Push  bool `json:"push"`
		Email bool `json:"email"`
	} `json:"kinds"`
	QuietHours *struct {
		Start string `json:"start"`
		End   string `json:"end"`
	} `json:"quiet_hours"`
	Timezone      string   `json:"timezone"`
	PushPlatforms []string `json:"push_platforms"`
	UpdatedAt     *string  `json:"updated_at"`
}

func settings(t *testing.T, s *apptest.Server, key, method, body string) notificationSettings {
	t.Helper()
	r := api(t, s, method, "/v1/users/me/notification-settings", key, body)
	if r.Status != 200 {
		t.Fatalf("%s settings: %d %s", method, r.Status, r.Body)
	}
	var st notificationSettings
	decodeInto(t, r, &st)
	return st
}

// TestNotificationSettings: the documented defaults, changes per kind and
// channel, quiet hours set and cleared, and refusals naming the field.
func TestNotificationSettings(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		nina := s.User(t, "nina")
		key := s.Key(t, nina, "read", "write")
		st := settings(t, s, key, "GET", "")
		if st.Object != "notification_settings" || len(st.Kinds) != len(notify.Kinds) || st.QuietHours != nil || st.UpdatedAt != nil ||
			st.Timezone != "UTC" || len(st.PushPlatforms) != 1 || st.PushPlatforms[0] != "webpush" {
			t.Fatalf("defaults %+v", st)
		}
		for kind, want := range map[string][3]bool{
			notify.KindMessage: {true, true, false}, notify.KindMatchRequested: {true, true, false}, notify.KindMatchDeclined: {true, false, false},
			notify.KindWebhookFailing: {true, false, true}, notify.KindVerificationDecided: {true, true, true},
		} {
			c := st.Kinds[kind]
			if [3]bool{c.InApp, c.Push, c.Email} != want {
				t.Errorf("%s default %+v", kind, c)
			}
		}
		st = settings(t, s, key, "PATCH", `{"kinds":{"message.new":{"push":false,"email":true}},"quiet_hours":{"start":"22:30","end":"07:00"}}`)
		if c := st.Kinds[notify.KindMessage]; !c.InApp || c.Push || !c.Email || st.QuietHours == nil || st.QuietHours.Start != "22:30" || st.UpdatedAt == nil {
			t.Fatalf("after patch %+v", st)
		}
		// Another change keeps the first.
		st = settings(t, s, key, "PATCH", `{"kinds":{"event.reminder":{"push":false}}}`)
		if st.Kinds[notify.KindMessage].Push || st.Kinds[notify.KindEventReminder].Push || st.QuietHours == nil {
			t.Fatalf("second patch lost the first: %+v", st)
		}
		if st = settings(t, s, key, "PATCH", `{"quiet_hours":null}`); st.QuietHours != nil {
			t.Errorf("null did not clear quiet hours")
		}
		if got := settings(t, s, key, "GET", ""); got.Kinds[notify.KindMessage].Push || got.QuietHours != nil {
			t.Errorf("GET after PATCH %+v", got)
		}
		for body, want := range map[string][3]string{
			`{"kinds":{"message.deleted":{"push":true}}}`:     {"422", "unknown_notification_kind", "kinds.message.deleted"},
			`{"quiet_hours":{"start":"22:00","end":"22:00"}}`: {"422", "invalid_quiet_hours", "quiet_hours.end"},
			`{"quiet_hours":{"start":"25:00","end":"07:00"}}`: {"422", "invalid_quiet_hours", "quiet_hours.start"},
			`{"kinds":{"message.new":{"push":"yes"}}}`:        {"422", "validation_failed", "kinds.message.new.push"},
			`{"kinds":{"message.new":{"sms":true}}}`:          {"422", "unknown_field", "kinds.message.new.sms"},
			`{"kinds":{"message.new":{"push":null}}}`:         {"422", "validation_failed", "kinds.message.new.push"},
		} {
			r := api(t, s, "PATCH", "/v1/users/me/notification-settings", key, body)
			p := r.JSON(t)
			if r.Status != 422 || p["code"] != want[1] || p["param"] != want[2] {
				t.Errorf("%s: %d %s, want %v", body, r.Status, r.Body, want)
			}
		}
		wantProblem(t, s, api(t, s, "PATCH", "/v1/users/me/notification-settings", s.Key(t, nina, "read"), `{}`), 403, "insufficient_scope", "")
	})
}

// TestNotificationPreferences: what each channel's setting does to the
// centre, to pushes and to quiet hours, read in the user's time zone with
// the service's clock.
func TestNotificationPreferences(t *testing.T) {
	eachPush(t, nil, func(t *testing.T, s *apptest.Server) {
		ps := newPushService(t, s.Clock.Now)
		ps.vapid = s.App.Notifications.VAPIDPublicKey()
		nina := s.User(t, "nina")
		key := s.Key(t, nina, "read", "write")
		if r := api(t, s, "POST", "/v1/users/me/devices", key, `{"platform":"webpush","subscription":`+ps.json(ps.subscribe("n"))+`}`); r.Status != 201 {
			t.Fatal(r.Status, string(r.Body))
		}
		sent := func() int { s.SendNotifications(t); return len(ps.messages()) }

		// Push off: in the centre, not pushed.
		settings(t, s, key, "PATCH", `{"kinds":{"match.requested":{"push":false},"event.updated":{"in_app":false}}}`)
		s.Notify(t, nina.ID, notify.KindMatchRequested, "Bob wants to play", "", "", nil)
		if sent() != 0 || len(listNotifications(t, s, key, "").Data) != 1 {
			t.Fatal("push off was pushed, or not kept in the centre")
		}
		// In-app off: pushed, not in the centre nor counted, but its
		// delivery can still be acknowledged.
		hidden := s.Notify(t, nina.ID, notify.KindEventUpdated, "Sunday football moved to 11:00", "", "", nil)
		if sent() != 1 || len(listNotifications(t, s, key, "").Data) != 1 || unread(t, s, key) != 1 {
			t.Fatal("in-app off: want pushed and out of the centre")
		}
		if r := api(t, s, "POST", "/v1/notifications/"+hidden.ID+"/delivered", key, ""); r.Status != 200 {
			t.Errorf("ack of a pushed notification kept out of the centre: %d %s", r.Status, r.Body)
		}
		// Declined requests: neither pushed nor mailed by default.
		s.Notify(t, nina.ID, notify.KindMatchDeclined, "Carl declined", "", "", nil)
		if sent() != 1 || s.PendingNotificationJobs(t) != 0 {
			t.Fatal("a kind with push off by default was queued")
		}

		// Quiet hours 22:00-07:00 in Tokyo (UTC+9): at 23:00 Tokyo the push
		// waits until 07:00 Tokyo.
		s.Profile(t, nina, users.Patch{Timezone: ptr("Asia/Tokyo")})
		settings(t, s, key, "PATCH", `{"quiet_hours":{"start":"22:00","end":"07:00"}}`)
		tokyo, _ := time.LoadLocation("Asia/Tokyo")
		y, m, d := s.Clock.Now().In(tokyo).Date()
		at := func(day, h, min int) time.Time { return time.Date(y, m, d+day, h, min, 0, 0, tokyo) }
		s.Clock.Set(at(1, 23, 0))
		quiet := s.Notify(t, nina.ID, notify.KindMessage, "Ann sent you a message", "late?", "conversation:cnv_9", nil)
		if sent() != 1 {
			t.Fatal("pushed during quiet hours")
		}
		s.Clock.Set(at(2, 6, 59))
		if sent() != 1 {
			t.Fatal("pushed before quiet hours ended")
		}
		s.Clock.Set(at(2, 7, 0))
		if sent() != 2 || ps.messages()[1].Payload["id"] != quiet.ID {
			t.Fatalf("not pushed when quiet hours ended: %+v", ps.messages())
		}
		// A push held by quiet hours is not sent if the notification was
		// read meanwhile.
		s.Clock.Set(at(2, 23, 30))
		read := s.Notify(t, nina.ID, notify.KindMatchAccepted, "Bob accepted", "", "", nil)
		api(t, s, "POST", "/v1/notifications/"+read.ID+"/read", key, "")
		s.Clock.Set(at(3, 8, 0))
		if sent() != 2 || s.PendingNotificationJobs(t) != 0 {
			t.Fatal("a push held by quiet hours went out after its notification was read")
		}
		// Quiet hours changed after a push was queued apply when it is due.
		s.Clock.Set(at(3, 12, 0))
		settings(t, s, key, "PATCH", `{"quiet_hours":null}`)
		s.Notify(t, nina.ID, notify.KindMatchAccepted, "Dana accepted", "", "", nil)
		settings(t, s, key, "PATCH", `{"quiet_hours":{"start":"11:00","end":"13:00"}}`)
		if sent() != 2 {
			t.Fatal("pushed inside quiet hours set after it was queued")
		}
		s.Clock.Set(at(3, 13, 0))
		if sent() != 3 {
			t.Fatal("not pushed after the new quiet hours")
		}
	})
}

func ptr[T any](v T) *T { return &v }
