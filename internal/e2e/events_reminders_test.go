package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/httpapi"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// passes runs n reminder passes at once, as n nodes would, and answers how
// many reminders they sent between them.
func passes(t *testing.T, s *apptest.Server, n int) int {
	t.Helper()
	var mu sync.Mutex
	total := 0
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sent, err := s.App.Events.SendReminders(context.Background())
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			total += sent
			mu.Unlock()
		}()
	}
	wg.Wait()
	return total
}

func TestRemindersFireOnce(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		org := s.User(t, "org")
		ko := eventsKey(t, s, org)
		who := map[string]*users.User{}
		k := map[string]string{}
		for _, n := range []string{"early", "second", "later", "unsure"} {
			who[n] = s.User(t, n)
			k[n] = eventsKey(t, s, who[n])
		}
		e := newEvent(t, s, ko, map[string]any{"max_participants": 2})
		cancelled := newEvent(t, s, ko, nil)
		rsvp(t, s, k["early"], e.ID, "going")
		rsvp(t, s, k["early"], cancelled.ID, "going")
		decode[httpapi.SportsEvent](t, api(t, s, "POST", "/v1/events/"+cancelled.ID+"/cancel", ko, ""), 200)
		rsvp(t, s, k["second"], e.ID, "going")
		rsvp(t, s, k["later"], e.ID, "going") // waitlisted
		rsvp(t, s, k["unsure"], e.ID, "maybe")
		reminders := func(name string) int {
			return len(apptest.Notifications(t, s.App.DB, who[name].ID, notify.KindEventReminder))
		}
		start, _ := time.Parse(time.RFC3339, e.Date)

		if n := passes(t, s, 2); n != 0 {
			t.Fatalf("%d reminders two days ahead", n)
		}
		// 24 hours before: those going, once, however many workers run.
		s.Clock.Set(start.Add(-24*time.Hour + time.Minute))
		if n := passes(t, s, 4); n != 2 {
			t.Fatalf("24-hour reminders sent: %d, want 2", n)
		}
		if n := passes(t, s, 2); n != 0 {
			t.Fatalf("sent again: %d", n)
		}
		for name, want := range map[string]int{"early": 1, "second": 1, "later": 0, "unsure": 0} {
			if got := reminders(name); got != want {
				t.Errorf("%s has %d reminders, want %d", name, got, want)
			}
		}
		// "second" withdraws; "later" moves up, after the 24-hour reminder
		// was due, and gets only the one-hour one.
		if r := api(t, s, "DELETE", "/v1/events/"+e.ID+"/rsvp", k["second"], ""); r.Status != 204 {
			t.Fatalf("withdraw: %d", r.Status)
		}
		if n := passes(t, s, 2); n != 0 {
			t.Fatalf("a promotion triggered %d reminders", n)
		}
		s.Clock.Set(start.Add(-time.Hour + time.Minute))
		if n := passes(t, s, 4); n != 2 {
			t.Fatalf("1-hour reminders sent: %d, want 2", n)
		}
		if n := passes(t, s, 2); n != 0 {
			t.Fatalf("sent again: %d", n)
		}
		for name, want := range map[string]int{"early": 2, "second": 1, "later": 1, "unsure": 0} {
			if got := reminders(name); got != want {
				t.Errorf("%s has %d reminders, want %d", name, got, want)
			}
		}
		ns := apptest.Notifications(t, s.App.DB, who["later"].ID, notify.KindEventReminder)
		if ns[0].Data["event_id"] != e.ID {
			t.Fatalf("reminder data: %+v", ns[0])
		}
		// Once started, nothing more.
		s.Clock.Set(start.Add(time.Minute))
		if n := passes(t, s, 1); n != 0 {
			t.Fatalf("%d reminders after the start", n)
		}
	})
}

// TestRemindersOnceAcrossNodes: two service processes run the reminders
// worker every 100 ms over one PostgreSQL; the one-hour reminder of an
// event starting in an hour and three seconds arrives once.
func TestRemindersOnceAcrossNodes(t *testing.T) {
	c := apptest.StartCluster(t, 2, "MATCHPOINT_EVENT_REMINDER_INTERVAL=100ms")
	people := apptest.Users(t, c.App, "node", 2)
	org, fan := people[0], people[1]
	ko, kf := keyOf(t, c.App, org.ID, "events"), keyOf(t, c.App, fan.ID, "events")
	body := jsonBody(t, map[string]any{"title": "Soon", "sport": "tennis", "location": "Lyon",
		"date": at(time.Now().Add(time.Hour + 3*time.Second)), "max_participants": 5})
	e := decode[httpapi.SportsEvent](t, nodeAPI(t, c.Nodes[0].URL, "POST", "/v1/events", ko, body), 201)
	decode[httpapi.EventRSVP](t, nodeAPI(t, c.Nodes[1].URL, "PUT", "/v1/events/"+e.ID+"/rsvp", kf, `{"status":"going"}`), 200)
	deadline := time.Now().Add(20 * time.Second)
	for {
		n := len(apptest.Notifications(t, c.App.DB, fan.ID, notify.KindEventReminder))
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reminder within 20 s\n%s\n%s", c.Nodes[0].Log(), c.Nodes[1].Log())
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second) // ten more passes on each node
	if n := len(apptest.Notifications(t, c.App.DB, fan.ID, notify.KindEventReminder)); n != 1 {
		t.Fatalf("%d reminders, want 1", n)
	}
}
