package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
)

// notificationList is the typed answer of list-notifications.
type notificationList struct {
	Object     string `json:"object"`
	HasMore    bool   `json:"has_more"`
	NextCursor string `json:"next_cursor"`
	Data       []struct {
		Object      string            `json:"object"`
		ID          string            `json:"id"`
		Kind        string            `json:"kind"`
		Title       string            `json:"title"`
		Body        string            `json:"body"`
		Data        map[string]string `json:"data"`
		Count       int               `json:"count"`
		ReadAt      *string           `json:"read_at"`
		DeliveredAt *string           `json:"delivered_at"`
	} `json:"data"`
}

func listNotifications(t *testing.T, s *apptest.Server, key, query string) notificationList {
	t.Helper()
	r := api(t, s, "GET", "/v1/notifications"+query, key, "")
	if r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	var l notificationList
	decodeInto(t, r, &l)
	return l
}

func unread(t *testing.T, s *apptest.Server, key string) float64 {
	t.Helper()
	r := api(t, s, "GET", "/v1/notifications/unread-count", key, "")
	if r.Status != 200 || str(r.JSON(t), "object") != "unread_count" {
		t.Fatalf("unread count: %d %s", r.Status, r.Body)
	}
	return r.JSON(t)["count"].(float64)
}

// TestNotificationCentre: the list by latest activity with cursors and the
// unread filter, read one, read up to one, the count, the acknowledgement
// and its event, and nobody else's notifications.
func TestNotificationCentre(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		nina, omar := s.User(t, "nina"), s.User(t, "omar")
		key, read := s.Key(t, nina, "read", "write"), s.Key(t, nina, "read")
		var ns []*notify.Notification
		for i := range 5 {
			s.Clock.Advance(time.Second)
			ns = append(ns, s.Notify(t, nina.ID, notify.KindEventReminder, fmt.Sprintf("Reminder %d", i), "", "", map[string]string{"event_id": fmt.Sprint("evt_", i)}))
		}
		theirs := s.Notify(t, omar.ID, notify.KindMatchRequested, "For Omar", "", "", nil)

		l := listNotifications(t, s, key, "?limit=2")
		if len(l.Data) != 2 || !l.HasMore || l.Data[0].ID != ns[4].ID || l.Data[1].ID != ns[3].ID || l.Data[0].Object != "notification" {
			t.Fatalf("first page %+v", l)
		}
		l2 := listNotifications(t, s, key, "?limit=2&cursor="+url.QueryEscape(l.NextCursor))
		l3 := listNotifications(t, s, key, "?limit=2&cursor="+url.QueryEscape(l2.NextCursor))
		if len(l2.Data) != 2 || l2.Data[0].ID != ns[2].ID || len(l3.Data) != 1 || l3.HasMore || l3.Data[0].ID != ns[0].ID {
			t.Fatalf("pages %+v %+v", l2, l3)
		}
		if u := unread(t, s, key); u != 5 {
			t.Fatalf("unread %v", u)
		}

		r := api(t, s, "POST", "/v1/notifications/"+ns[1].ID+"/read", key, "")
		if r.Status != 200 || str(r.JSON(t), "read_at") == "" {
			t.Fatalf("read: %d %s", r.Status, r.Body)
		}
		first := str(r.JSON(t), "read_at")
		s.Clock.Advance(time.Minute)
		if r = api(t, s, "POST", "/v1/notifications/"+ns[1].ID+"/read", key, ""); str(r.JSON(t), "read_at") != first {
			t.Errorf("reading again moved read_at: %s", r.Body)
		}
		if l := listNotifications(t, s, key, "?unread=true"); len(l.Data) != 4 {
			t.Errorf("unread list %+v", l)
		}
		// Up to ns[3]: ns[3], ns[2] and ns[0] become read, ns[4] stays.
		r = api(t, s, "POST", "/v1/notifications/read", key, `{"up_to":"`+ns[3].ID+`"}`)
		if r.Status != 200 || r.JSON(t)["marked"] != 3.0 || r.JSON(t)["unread_count"] != 1.0 {
			t.Fatalf("read up to: %d %s", r.Status, r.Body)
		}
		if l := listNotifications(t, s, key, "?unread=true"); len(l.Data) != 1 || l.Data[0].ID != ns[4].ID {
			t.Errorf("unread after read up to: %+v", l)
		}
		if r = api(t, s, "POST", "/v1/notifications/read", key, ""); r.JSON(t)["marked"] != 1.0 || unread(t, s, key) != 0 {
			t.Errorf("read all: %s", r.Body)
		}

		// The acknowledgement: once, with its event.
		r = api(t, s, "POST", "/v1/notifications/"+ns[0].ID+"/delivered", key, "")
		if r.Status != 200 || str(r.JSON(t), "delivered_at") == "" {
			t.Fatalf("ack: %d %s", r.Status, r.Body)
		}
		api(t, s, "POST", "/v1/notifications/"+ns[0].ID+"/delivered", key, "")
		evs := notificationEvents(t, s)
		if len(evs) != 1 || evs[0].Type != outbox.NotificationDelivered || evs[0].N["id"] != ns[0].ID || evs[0].delivery()["channel"] != "app" ||
			evs[0].Audience[0] != nina.ID {
			t.Errorf("ack events %+v", evs)
		}
		if r = api(t, s, "GET", "/v1/notifications/"+ns[0].ID, read, ""); r.Status != 200 || str(r.JSON(t), "title") != "Reminder 0" {
			t.Errorf("get: %d %s", r.Status, r.Body)
		}

		// Someone else's notification does not exist for Nina.
		for _, path := range []string{"/v1/notifications/" + theirs.ID, "/v1/notifications/" + theirs.ID + "/read", "/v1/notifications/" + theirs.ID + "/delivered"} {
			method := "POST"
			if path == "/v1/notifications/"+theirs.ID {
				method = "GET"
			}
			wantProblem(t, s, api(t, s, method, path, key, ""), 404, "not_found", "")
		}
		wantProblem(t, s, api(t, s, "POST", "/v1/notifications/read", key, `{"up_to":"`+theirs.ID+`"}`), 422, "invalid_notification_id", "up_to")
		wantProblem(t, s, api(t, s, "GET", "/v1/notifications?cursor=zzz", key, ""), 422, "invalid_cursor", "cursor")
		wantProblem(t, s, api(t, s, "GET", "/v1/notifications/ntf_nope", key, ""), 404, "not_found", "")
		// Scopes: read lists, write changes.
		wantProblem(t, s, api(t, s, "POST", "/v1/notifications/read", read, ""), 403, "insufficient_scope", "")
		wantProblem(t, s, api(t, s, "GET", "/v1/notifications", "", ""), 401, "unauthenticated", "")
		if l := listNotifications(t, s, s.Key(t, omar, "read"), ""); len(l.Data) != 1 || l.Data[0].ID != theirs.ID {
			t.Errorf("omar sees %+v", l)
		}
	})
}

// TestMessageCollapse: new messages of a conversation fold into one
// notification while it is unread; its push goes out once with the latest
// text; once read, the next message starts a new one.
func TestMessageCollapse(t *testing.T) {
	eachPush(t, nil, func(t *testing.T, s *apptest.Server) {
		ps := newPushService(t, s.Clock.Now)
		ps.vapid = s.App.Notifications.VAPIDPublicKey()
		nina := s.User(t, "nina")
		key := s.Key(t, nina, "read", "write")
		if r := api(t, s, "POST", "/v1/users/me/devices", key, `{"platform":"webpush","subscription":`+ps.json(ps.subscribe("n"))+`}`); r.Status != 201 {
			t.Fatal(r.Status, string(r.Body))
		}
		msg := func(text string) *notify.Notification {
			s.Clock.Advance(time.Second)
			return s.Notify(t, nina.ID, notify.KindMessage, "Ann sent you a message", text, "conversation:cnv_1", map[string]string{"conversation_id": "cnv_1"})
		}
		a, b := msg("tennis?"), msg("at 6?")
		other := s.Notify(t, nina.ID, notify.KindMessage, "Bob sent you a message", "hi", "conversation:cnv_2", nil)
		if a.ID != b.ID || b.Count != 2 || other.ID == a.ID {
			t.Fatalf("not collapsed: %s %s (%d)", a.ID, b.ID, b.Count)
		}
		l := listNotifications(t, s, key, "")
		if len(l.Data) != 2 || l.Data[1].ID != a.ID || l.Data[1].Count != 2 || l.Data[1].Body != "at 6?" {
			t.Fatalf("list %+v", l)
		}
		if n := s.SendNotifications(t); n != 2 {
			t.Fatalf("%d pushes, want one per conversation", n)
		}
		var conv1 []pushed
		for _, m := range ps.messages() {
			if m.Payload["id"] == a.ID {
				conv1 = append(conv1, m)
			}
		}
		if len(conv1) != 1 || conv1[0].Payload["body"] != "at 6?" || conv1[0].Payload["count"] != 2.0 || conv1[0].Header.Get("Topic") == "" {
			t.Fatalf("conversation pushes %+v", conv1)
		}
		// Still unread: a third message folds in and is pushed again (the
		// Topic header makes the push service replace the older one).
		c := msg("answer please")
		s.SendNotifications(t)
		last := ps.messages()[len(ps.messages())-1]
		if c.ID != a.ID || c.Count != 3 || last.Payload["count"] != 3.0 || last.Header.Get("Topic") != conv1[0].Header.Get("Topic") {
			t.Errorf("third message: %s count %d, push %+v", c.ID, c.Count, last.Payload)
		}
		api(t, s, "POST", "/v1/notifications/"+a.ID+"/read", key, "")
		if d := msg("new thread"); d.ID == a.ID || d.Count != 1 {
			t.Errorf("a read notification absorbed a message")
		}
	})
}

// TestNotificationErasure: deleting the account deletes its notifications,
// devices, settings and queued work.
func TestNotificationErasure(t *testing.T) {
	eachPush(t, nil, func(t *testing.T, s *apptest.Server) {
		ps := newPushService(t, s.Clock.Now)
		nina := s.User(t, "nina")
		key := s.Key(t, nina, "read", "write")
		api(t, s, "POST", "/v1/users/me/devices", key, `{"platform":"webpush","subscription":`+ps.json(ps.subscribe("n"))+`}`)
		api(t, s, "PATCH", "/v1/users/me/notification-settings", key, `{"quiet_hours":{"start":"00:00","end":"23:59"}}`)
		s.Notify(t, nina.ID, notify.KindMatchRequested, "Bob wants to play", "", "", nil)
		if s.PendingNotificationJobs(t) != 1 {
			t.Fatal("no job queued")
		}
		if err := s.App.Users.Delete(t.Context(), nina.ID); err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"notifications", "push_devices", "notification_settings", "notification_jobs"} {
			var n int
			if err := s.App.DB.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM `+table+` WHERE user_id = $1`, nina.ID).Scan(&n); err != nil || n != 0 {
				t.Errorf("%s: %d rows left (%v)", table, n, err)
			}
		}
		// A domain notifying an erased account writes nothing.
		s.Notify(t, nina.ID, notify.KindMatchRequested, "Carl wants to play", "", "", nil)
		if s.PendingNotificationJobs(t) != 0 {
			t.Error("work queued for an erased account")
		}
	})
}

// decodeInto reads a JSON answer into v.
func decodeInto(t *testing.T, r resp, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("answer %s: %v", r.Body, err)
	}
}
