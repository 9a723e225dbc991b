package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/httpapi"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

func names(list []httpapi.EventAttendee) string {
	var out []string
	for _, a := range list {
		s := a.User.Username + ":" + a.Status
		if a.WaitlistPosition != nil {
			s += ":" + string(rune('0'+*a.WaitlistPosition))
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func TestRSVPWaitlistAndAttendees(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		org := s.User(t, "org")
		ko := eventsKey(t, s, org)
		k, us := map[string]string{}, map[string]*users.User{}
		for _, n := range []string{"amy", "ben", "cat", "dan", "eve", "fay"} {
			us[n] = s.User(t, n)
			k[n] = eventsKey(t, s, us[n])
		}
		e := newEvent(t, s, ko, map[string]any{"max_participants": 2})

		// The creator takes no place; going fills places, then the waitlist.
		if r := rsvp(t, s, k["amy"], e.ID, "going"); r.Status != "going" || r.WaitlistPosition != nil || !strings.HasPrefix(r.ID, "rsv_") {
			t.Fatalf("amy: %+v", r)
		}
		rsvp(t, s, k["ben"], e.ID, "going")
		if r := rsvp(t, s, k["cat"], e.ID, "going"); r.Status != "waitlisted" || *r.WaitlistPosition != 1 {
			t.Fatalf("cat: %+v", r)
		}
		if r := rsvp(t, s, k["dan"], e.ID, "going"); r.Status != "waitlisted" || *r.WaitlistPosition != 2 {
			t.Fatalf("dan: %+v", r)
		}
		before := len(recorded(t, s, outbox.EventRSVP, e.ID))
		if r := rsvp(t, s, k["cat"], e.ID, "going"); r.Status != "waitlisted" || *r.WaitlistPosition != 1 {
			t.Fatalf("going again while waitlisted: %+v", r)
		}
		if after := len(recorded(t, s, outbox.EventRSVP, e.ID)); after != before {
			t.Fatal("an unchanged answer recorded event.rsvp")
		}
		if r := decode[httpapi.EventRSVP](t, api(t, s, "GET", "/v1/events/"+e.ID+"/rsvp", k["cat"], ""), 200); *r.WaitlistPosition != 1 {
			t.Fatalf("get rsvp: %+v", r)
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/events/"+e.ID+"/rsvp", k["eve"], ""), 404, "not_found", "")
		wantProblem(t, s, api(t, s, "PUT", "/v1/events/"+e.ID+"/rsvp", k["eve"], `{"status":"waitlisted"}`), 422, "validation_failed", "status")
		wantProblem(t, s, api(t, s, "DELETE", "/v1/events/"+e.ID+"/rsvp", k["eve"], ""), 404, "not_found", "")

		// Amy withdraws: Cat, first in line, moves up and is told; Dan is now first.
		if r := api(t, s, "DELETE", "/v1/events/"+e.ID+"/rsvp", k["amy"], ""); r.Status != 204 {
			t.Fatalf("withdraw: %d %s", r.Status, r.Body)
		}
		if got := names(attendees(t, s.URL, ko, e.ID, "")); !strings.HasPrefix(got, "ben:going cat:going dan:waitlisted:1") {
			t.Fatalf("after withdrawal: %s", got)
		}
		catID := decode[httpapi.EventRSVP](t, api(t, s, "GET", "/v1/events/"+e.ID+"/rsvp", k["cat"], ""), 200).UserID
		if ns := apptest.Notifications(t, s.App.DB, catID, notify.KindEventPromoted); len(ns) != 1 || ns[0].Data["event_id"] != e.ID {
			t.Fatalf("promotion notification: %+v", ns)
		}
		evs := recorded(t, s, outbox.EventRSVP, e.ID)
		last2 := evs[len(evs)-2:]
		if d := eventData(t, last2[0]); d["rsvp"]["status"] != "withdrawn" || d["event"]["going_count"] != float64(2) {
			t.Fatalf("withdrawal event: %v", d)
		}
		if d := eventData(t, last2[1]); d["rsvp"]["status"] != "going" || d["rsvp"]["user_id"] != catID || !has(last2[1].Audience, org.ID) {
			t.Fatalf("promotion event: %v %v", d, last2[1].Audience)
		}

		// Dan leaves the waitlist for maybe; Ben frees a place nobody waits for.
		rsvp(t, s, k["dan"], e.ID, "maybe")
		rsvp(t, s, k["ben"], e.ID, "not_going")
		if ev := getEvent(t, s, ko, e.ID); ev.GoingCount != 1 || ev.WaitlistCount != 0 || ev.MaybeCount != 1 || ev.SpotsLeft != 1 {
			t.Fatalf("counts: %+v", ev)
		}
		// Eve's profile is private; Fay and Ben block each other.
		decode[httpapi.Profile](t, api(t, s, "PATCH", "/v1/users/me", keyOf(t, s.App, us["eve"].ID, "write"), `{"privacy":{"profile_visibility":"private"}}`), 200)
		rsvp(t, s, k["eve"], e.ID, "going")
		if r := rsvp(t, s, k["fay"], e.ID, "going"); r.Status != "waitlisted" || *r.WaitlistPosition != 1 {
			t.Fatalf("fay: %+v", r)
		}
		block(t, s, us["fay"], us["ben"])

		if got := names(attendees(t, s.URL, ko, e.ID, "")); got != "cat:going eve:going fay:waitlisted:1 dan:maybe ben:not_going" {
			t.Fatalf("creator's list: %s", got)
		}
		if got := names(attendees(t, s.URL, k["amy"], e.ID, "")); got != "cat:going fay:waitlisted:1 dan:maybe ben:not_going" {
			t.Fatalf("another member's list: %s", got)
		}
		if got := names(attendees(t, s.URL, k["ben"], e.ID, "")); got != "cat:going dan:maybe ben:not_going" {
			t.Fatalf("the blocked member's list: %s", got)
		}
		if got := names(attendees(t, s.URL, k["eve"], e.ID, "status=going")); got != "cat:going eve:going" {
			t.Fatalf("eve's own going list: %s", got)
		}
		// One item per page gives the same list.
		var paged []httpapi.EventAttendee
		cursor := ""
		for i := 0; i < 10; i++ {
			q := "/v1/events/" + e.ID + "/attendees?limit=1"
			if cursor != "" {
				q += "&cursor=" + cursor
			}
			page := decode[httpapi.List[httpapi.EventAttendee]](t, api(t, s, "GET", q, ko, ""), 200)
			paged = append(paged, page.Data...)
			if !page.HasMore {
				break
			}
			cursor = page.NextCursor
		}
		if names(paged) != "cat:going eve:going fay:waitlisted:1 dan:maybe ben:not_going" {
			t.Fatalf("paged: %s", names(paged))
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/events/"+e.ID+"/attendees?cursor=bogus", ko, ""), 422, "invalid_cursor", "cursor")
		wantProblem(t, s, api(t, s, "GET", "/v1/events/"+e.ID+"/attendees?status=gone", ko, ""), 422, "validation_failed", "status")
		if a := attendees(t, s.URL, k["amy"], e.ID, "")[0]; a.Reliability != nil || a.CheckedIn != nil {
			t.Fatal("a member sees the creator's attendee details")
		}

		// The creator removes Cat: Fay moves up, Cat is told.
		wantProblem(t, s, api(t, s, "DELETE", "/v1/events/"+e.ID+"/attendees/"+catID, k["dan"], ""), 403, "not_event_creator", "")
		if r := api(t, s, "DELETE", "/v1/events/"+e.ID+"/attendees/"+catID, ko, ""); r.Status != 204 {
			t.Fatalf("remove: %d %s", r.Status, r.Body)
		}
		wantProblem(t, s, api(t, s, "DELETE", "/v1/events/"+e.ID+"/attendees/"+catID, ko, ""), 404, "not_found", "")
		if ns := apptest.Notifications(t, s.App.DB, catID, notify.KindEventUpdated); len(ns) != 1 {
			t.Fatalf("removed attendee notifications: %+v", ns)
		}
		if got := names(attendees(t, s.URL, ko, e.ID, "status=going")); got != "eve:going fay:going" {
			t.Fatalf("after removal: %s", got)
		}
		evs = recorded(t, s, outbox.EventRSVP, e.ID)
		if d := eventData(t, evs[len(evs)-2]); d["rsvp"]["status"] != "removed" {
			t.Fatalf("removal event: %v", d)
		}
	})
}

func TestCheckInsAndReliability(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		org, came, skipped, walkin, nobody := s.User(t, "org"), s.User(t, "came"), s.User(t, "skipped"), s.User(t, "walkin"), s.User(t, "nobody")
		ko := eventsKey(t, s, org)
		e := newEvent(t, s, ko, map[string]any{"max_participants": 2})
		kc, ks, kw := eventsKey(t, s, came), eventsKey(t, s, skipped), eventsKey(t, s, walkin)
		rsvp(t, s, kc, e.ID, "going")
		rsvp(t, s, ks, e.ID, "going")
		rsvp(t, s, kw, e.ID, "going") // waitlisted
		checkIn := func(key, userID string) resp {
			return api(t, s, "POST", "/v1/events/"+e.ID+"/check-ins", key, `{"user_id":"`+userID+`"}`)
		}
		wantProblem(t, s, checkIn(ko, came.ID), 409, "check_in_closed", "")

		s.Clock.Advance(48*time.Hour + 30*time.Minute) // the event is on
		c := decode[httpapi.EventCheckIn](t, checkIn(ko, came.ID), 201)
		if again := decode[httpapi.EventCheckIn](t, checkIn(ko, came.ID), 200); again.CreatedAt != c.CreatedAt {
			t.Fatalf("second check-in: %+v vs %+v", again, c)
		}
		decode[httpapi.EventCheckIn](t, checkIn(ko, walkin.ID), 201) // from the waitlist, came anyway
		wantProblem(t, s, checkIn(ko, nobody.ID), 422, "not_attending", "user_id")
		wantProblem(t, s, checkIn(ko, "usr_nonsense"), 422, "not_attending", "user_id")
		wantProblem(t, s, checkIn(kc, came.ID), 403, "not_event_creator", "")
		if ev := getEvent(t, s, ko, e.ID); ev.AttendedCount != 2 || ev.NoShowCount != nil {
			t.Fatalf("during the window: %+v", ev)
		}
		list := attendees(t, s.URL, ko, e.ID, "status=going")
		if len(list) != 2 || list[0].CheckedIn == nil || !*list[0].CheckedIn || *list[1].CheckedIn {
			t.Fatalf("creator's view of check-ins: %s", names(list))
		}

		// 24 hours after the end the window closes and the counts are final.
		s.Clock.Advance(2*time.Hour + 24*time.Hour)
		wantProblem(t, s, checkIn(ko, skipped.ID), 409, "check_in_closed", "")
		if ev := getEvent(t, s, ko, e.ID); ev.AttendedCount != 2 || ev.NoShowCount == nil || *ev.NoShowCount != 1 {
			t.Fatalf("final counts: %+v", ev)
		}
		rel := func(key string) httpapi.EventReliability {
			return decode[httpapi.EventReliability](t, api(t, s, "GET", "/v1/users/me/reliability", key, ""), 200)
		}
		if r := rel(kc); r.Events != 1 || r.Attended != 1 || *r.Score != 1 {
			t.Fatalf("attendee's reliability: %+v", r)
		}
		if r := rel(ks); r.Events != 1 || r.Attended != 0 || *r.Score != 0 {
			t.Fatalf("no-show's reliability: %+v", r)
		}
		if r := rel(kw); r.Events != 0 || r.Score != nil {
			t.Fatalf("a walk-in from the waitlist was not going: %+v", r)
		}
		// Organisers see the reliability of those who answer their events.
		e2 := newEvent(t, s, ko, nil)
		rsvp(t, s, ks, e2.ID, "going")
		if a := attendees(t, s.URL, ko, e2.ID, ""); len(a) != 1 || a[0].Reliability == nil || *a[0].Reliability.Score != 0 {
			t.Fatalf("organiser's view: %+v", a)
		}

		// Your events: past and upcoming, as creator or attendee.
		mine := func(key, q string) []httpapi.MyEvent {
			return decode[httpapi.List[httpapi.MyEvent]](t, api(t, s, "GET", "/v1/users/me/events?"+q, key, ""), 200).Data
		}
		if p := mine(kc, "when=past"); len(p) != 1 || p[0].ID != e.ID || p[0].Role != "attendee" || *p[0].RSVPStatus != "going" {
			t.Fatalf("past events of an attendee: %+v", p)
		}
		if u := mine(kc, ""); len(u) != 0 {
			t.Fatalf("upcoming events of an attendee: %+v", u)
		}
		if u := mine(ko, "when=upcoming&role=creator"); len(u) != 1 || u[0].ID != e2.ID || u[0].Role != "creator" || u[0].RSVPStatus != nil {
			t.Fatalf("upcoming events of the creator: %+v", u)
		}
		if p := mine(ko, "when=past&role=attendee"); len(p) != 0 {
			t.Fatalf("the creator answered nothing: %+v", p)
		}
	})
}
