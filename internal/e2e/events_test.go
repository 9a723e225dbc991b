package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/httpapi"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
)

func TestEventCreateAndGet(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		ann := s.User(t, "ann")
		k := eventsKey(t, s, ann)
		start := s.Clock.Now().Add(72 * time.Hour).Truncate(time.Second)
		r := api(t, s, "POST", "/v1/events", k, jsonBody(t, map[string]any{
			"title": "  Sunday doubles ", "description": "Friendly.\nBalls provided.", "sport": "Tennis",
			"location": "Tennis Club de Lyon", "latitude": 45.77, "longitude": 4.85, "date": at(start),
			"max_participants": 4, "timezone": "Europe/Paris", "skill_min": "intermediate", "skill_max": "advanced",
		}))
		e := decode[httpapi.SportsEvent](t, r, 201)
		if r.Header.Get("Location") != "/v1/events/"+e.ID || !strings.HasPrefix(e.ID, "evt_") {
			t.Fatalf("id %q, Location %q", e.ID, r.Header.Get("Location"))
		}
		if e.Title != "Sunday doubles" || e.Sport != "tennis" || e.CreatorID != ann.ID || e.MaxParticipants != 4 ||
			e.Date != start.Format("2006-01-02T15:04:05.000Z") || e.EndDate != start.Add(2*time.Hour).Format("2006-01-02T15:04:05.000Z") ||
			e.Timezone != "Europe/Paris" || *e.SkillMin != "intermediate" || *e.SkillMax != "advanced" || e.Visibility != "public" ||
			e.Status != "scheduled" || e.SpotsLeft != 4 || e.SeriesID != nil || e.NoShowCount != nil || *e.Latitude != 45.77 {
			t.Fatalf("created %+v", e)
		}
		if got := getEvent(t, s, keyOf(t, s.App, s.User(t, "bob").ID, "read"), e.ID); got.ID != e.ID || got.Title != e.Title {
			t.Fatalf("get: %+v", got)
		}
		// Nullable fields clear with null.
		p := decode[httpapi.SportsEvent](t, api(t, s, "PATCH", "/v1/events/"+e.ID, k, `{"skill_min":null,"skill_max":"expert","latitude":null,"longitude":null}`), 200)
		if p.SkillMin != nil || *p.SkillMax != "expert" || p.Latitude != nil || p.Longitude != nil {
			t.Fatalf("patched: %+v", p)
		}
		wantProblem(t, s, api(t, s, "PATCH", "/v1/events/"+e.ID, k, `{"skill_min":"expert","skill_max":"beginner"}`), 422, "invalid_skill_range", "skill_max")
		// The time zone defaults to the creator's.
		decode[httpapi.Profile](t, api(t, s, "PATCH", "/v1/users/me", keyOf(t, s.App, ann.ID, "write"), `{"timezone":"America/New_York"}`), 200)
		if e := newEvent(t, s, k, nil); e.Timezone != "America/New_York" {
			t.Fatalf("timezone %q", e.Timezone)
		}
		// event.created carries the document's fields, to the creator alone.
		evs := recorded(t, s, outbox.EventCreated, e.ID)
		if len(evs) != 1 || len(evs[0].Audience) != 1 || evs[0].Audience[0] != ann.ID {
			t.Fatalf("event.created: %+v", evs)
		}
		data := eventData(t, evs[0])["event"]
		for _, f := range []string{"id", "title", "description", "sport", "location", "date", "max_participants", "creator_id", "created_at"} {
			if _, ok := data[f]; !ok {
				t.Errorf("event.created data lacks %s: %v", f, data)
			}
		}
		// Scopes: creating needs events; reading needs read or events.
		wantProblem(t, s, api(t, s, "POST", "/v1/events", keyOf(t, s.App, ann.ID, "read", "write"), `{}`), 403, "insufficient_scope", "")
		wantProblem(t, s, api(t, s, "GET", "/v1/events/"+e.ID, keyOf(t, s.App, ann.ID, "write"), ""), 403, "insufficient_scope", "")
		wantProblem(t, s, api(t, s, "GET", "/v1/events/evt_nothing", k, ""), 404, "not_found", "")
	})
}

func TestEventValidation(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		k := eventsKey(t, s, s.User(t, "val"))
		now := s.Clock.Now()
		for _, c := range []struct {
			name   string
			body   map[string]any
			status int
			code   string
			param  string
		}{
			{"title missing", map[string]any{"title": nil}, 422, "validation_failed", "title"},
			{"title blank", map[string]any{"title": "   "}, 422, "validation_failed", "title"},
			{"title too long", map[string]any{"title": strings.Repeat("x", 201)}, 422, "validation_failed", "title"},
			{"title two lines", map[string]any{"title": "a\nb"}, 422, "invalid_text", "title"},
			{"description control", map[string]any{"description": "a\u0007b"}, 422, "invalid_text", "description"},
			{"description too long", map[string]any{"description": strings.Repeat("é", 5001)}, 422, "validation_failed", "description"},
			{"unknown sport", map[string]any{"sport": "quidditch"}, 422, "unknown_sport", "sport"},
			{"location missing", map[string]any{"location": ""}, 422, "validation_failed", "location"},
			{"location blank", map[string]any{"location": "  "}, 422, "validation_failed", "location"},
			{"latitude alone", map[string]any{"latitude": 45.0}, 422, "incomplete_coordinates", "longitude"},
			{"longitude alone", map[string]any{"longitude": 4.0}, 422, "incomplete_coordinates", "latitude"},
			{"latitude range", map[string]any{"latitude": 91.0, "longitude": 4.0}, 422, "out_of_range", "latitude"},
			{"longitude range", map[string]any{"latitude": 45.0, "longitude": -181.0}, 422, "out_of_range", "longitude"},
			{"date past", map[string]any{"date": at(now.Add(-time.Minute))}, 422, "date_in_past", "date"},
			{"date far", map[string]any{"date": at(now.Add(3 * 365 * 24 * time.Hour))}, 422, "date_too_far", "date"},
			{"date not a time", map[string]any{"date": "tomorrow"}, 422, "validation_failed", "date"},
			{"end before start", map[string]any{"end_date": at(now.Add(47 * time.Hour))}, 422, "end_before_start", "end_date"},
			{"end equals start", map[string]any{"end_date": at(now.Add(48 * time.Hour))}, 422, "end_before_start", "end_date"},
			{"too long", map[string]any{"end_date": at(now.Add(48*time.Hour + 8*24*time.Hour))}, 422, "invalid_duration", "end_date"},
			{"capacity zero", map[string]any{"max_participants": 0}, 422, "validation_failed", "max_participants"},
			{"capacity over", map[string]any{"max_participants": 10001}, 422, "validation_failed", "max_participants"},
			{"timezone", map[string]any{"timezone": "Mars/Olympus_Mons"}, 422, "invalid_timezone", "timezone"},
			{"skill level", map[string]any{"skill_min": "pro"}, 422, "validation_failed", "skill_min"},
			{"skill range", map[string]any{"skill_min": "advanced", "skill_max": "beginner"}, 422, "invalid_skill_range", "skill_max"},
			{"visibility", map[string]any{"visibility": "secret"}, 422, "validation_failed", "visibility"},
			{"recurrence freq", map[string]any{"recurrence": "FREQ=MONTHLY;COUNT=3"}, 422, "invalid_recurrence", "recurrence"},
			{"recurrence endless", map[string]any{"recurrence": "FREQ=WEEKLY"}, 422, "invalid_recurrence", "recurrence"},
			{"recurrence too many", map[string]any{"recurrence": "FREQ=DAILY;COUNT=101"}, 422, "invalid_recurrence", "recurrence"},
			{"recurrence too late", map[string]any{"recurrence": "FREQ=WEEKLY;INTERVAL=52;COUNT=4"}, 422, "invalid_recurrence", "recurrence"},
			{"unknown field", map[string]any{"colour": "red"}, 422, "unknown_field", "colour"},
		} {
			t.Run(c.name, func(t *testing.T) {
				body := map[string]any{"title": "Evening tennis", "sport": "tennis", "location": "Lyon",
					"date": at(now.Add(48 * time.Hour)), "max_participants": 10}
				for k, v := range c.body {
					if v == nil {
						delete(body, k)
					} else {
						body[k] = v
					}
				}
				wantProblem(t, s, api(t, s, "POST", "/v1/events", k, jsonBody(t, body)), c.status, c.code, c.param)
			})
		}
		if n := countEvents(t, s, outbox.EventCreated); n != 0 {
			t.Fatalf("%d events created by invalid requests", n)
		}
	})
}

func TestEventUpdateCancelNotifies(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		org, going, waiting, maybe, notGoing := s.User(t, "org"), s.User(t, "going"), s.User(t, "waiting"), s.User(t, "maybe"), s.User(t, "nope")
		ko := eventsKey(t, s, org)
		e := newEvent(t, s, ko, map[string]any{"max_participants": 1})
		rsvp(t, s, eventsKey(t, s, going), e.ID, "going")
		if r := rsvp(t, s, eventsKey(t, s, waiting), e.ID, "going"); r.Status != "waitlisted" || *r.WaitlistPosition != 1 {
			t.Fatalf("second going: %+v", r)
		}
		rsvp(t, s, eventsKey(t, s, maybe), e.ID, "maybe")
		rsvp(t, s, eventsKey(t, s, notGoing), e.ID, "not_going")

		// Someone else may not change it; a title change tells nobody.
		wantProblem(t, s, api(t, s, "PATCH", "/v1/events/"+e.ID, eventsKey(t, s, going), `{"title":"Mine now"}`), 403, "not_event_creator", "")
		u := decode[httpapi.SportsEvent](t, api(t, s, "PATCH", "/v1/events/"+e.ID, ko, `{"title":"Evening tennis (bring water)"}`), 200)
		if u.Title != "Evening tennis (bring water)" || len(apptest.Notifications(t, s.App.DB, going.ID, notify.KindEventUpdated)) != 0 {
			t.Fatalf("title change: %+v", u)
		}
		// A new time reaches going, waitlisted and maybe, not the creator nor not_going.
		newStart := s.Clock.Now().Add(50 * time.Hour).Truncate(time.Second)
		u = decode[httpapi.SportsEvent](t, api(t, s, "PATCH", "/v1/events/"+e.ID, ko, jsonBody(t, map[string]any{"date": at(newStart)})), 200)
		if u.Date != newStart.Format("2006-01-02T15:04:05.000Z") || u.EndDate != newStart.Add(2*time.Hour).Format("2006-01-02T15:04:05.000Z") {
			t.Fatalf("moved: %+v", u)
		}
		for who, want := range map[string]int{going.ID: 1, waiting.ID: 1, maybe.ID: 1, notGoing.ID: 0, org.ID: 0} {
			if got := len(apptest.Notifications(t, s.App.DB, who, notify.KindEventUpdated)); got != want {
				t.Errorf("%s got %d event.updated notifications, want %d", who, got, want)
			}
		}
		// Capacity: not below those going; raising it moves the waitlist up.
		wantProblem(t, s, api(t, s, "PATCH", "/v1/events/"+e.ID, ko, `{"max_participants":0}`), 422, "validation_failed", "max_participants")
		rsvp(t, s, eventsKey(t, s, s.User(t, "third")), e.ID, "going") // waitlisted 2
		u = decode[httpapi.SportsEvent](t, api(t, s, "PATCH", "/v1/events/"+e.ID, ko, `{"max_participants":2}`), 200)
		if u.GoingCount != 2 || u.WaitlistCount != 1 {
			t.Fatalf("after raising capacity: %+v", u)
		}
		if n := apptest.Notifications(t, s.App.DB, waiting.ID, notify.KindEventPromoted); len(n) != 1 || n[0].Data["event_id"] != e.ID {
			t.Fatalf("promotion notifications: %+v", n)
		}
		wantProblem(t, s, api(t, s, "PATCH", "/v1/events/"+e.ID, ko, `{"max_participants":1}`), 409, "capacity_below_going", "max_participants")
		wantProblem(t, s, api(t, s, "PATCH", "/v1/events/"+e.ID, ko, jsonBody(t, map[string]any{"end_date": at(newStart.Add(-time.Hour))})), 422, "end_before_start", "end_date")
		wantProblem(t, s, api(t, s, "PATCH", "/v1/events/"+e.ID, ko, `{"latitude":45}`), 422, "incomplete_coordinates", "longitude")

		// Cancelling tells everyone who answered (not not_going), once.
		wantProblem(t, s, api(t, s, "POST", "/v1/events/"+e.ID+"/cancel", eventsKey(t, s, going), ""), 403, "not_event_creator", "")
		c := decode[httpapi.SportsEvent](t, api(t, s, "POST", "/v1/events/"+e.ID+"/cancel", ko, `{"reason":"Courts flooded."}`), 200)
		if c.Status != "cancelled" || c.CancelledAt == nil || c.CancelReason != "Courts flooded." {
			t.Fatalf("cancelled: %+v", c)
		}
		for who, want := range map[string]int{going.ID: 1, waiting.ID: 1, maybe.ID: 1, notGoing.ID: 0, org.ID: 0} {
			ns := apptest.Notifications(t, s.App.DB, who, notify.KindEventCancelled)
			if len(ns) != want {
				t.Errorf("%s got %d cancellation notifications, want %d", who, len(ns), want)
			}
			if want == 1 && (ns[0].Data["event_id"] != e.ID || !strings.Contains(ns[0].Body, "Courts flooded.")) {
				t.Errorf("notification %+v", ns[0])
			}
		}
		wantProblem(t, s, api(t, s, "POST", "/v1/events/"+e.ID+"/cancel", ko, ""), 409, "event_cancelled", "")
		wantProblem(t, s, api(t, s, "PUT", "/v1/events/"+e.ID+"/rsvp", eventsKey(t, s, maybe), `{"status":"going"}`), 409, "event_cancelled", "")
		wantProblem(t, s, api(t, s, "PATCH", "/v1/events/"+e.ID, ko, `{"title":"x"}`), 409, "event_cancelled", "")

		// event.updated and event.cancelled reach the creator and everyone who answered.
		ups, cs := recorded(t, s, outbox.EventUpdated, e.ID), recorded(t, s, outbox.EventCancelled, e.ID)
		if len(ups) != 3 || len(cs) != 1 {
			t.Fatalf("%d event.updated, %d event.cancelled", len(ups), len(cs))
		}
		for _, who := range []string{org.ID, going.ID, waiting.ID, maybe.ID, notGoing.ID} {
			if !has(cs[0].Audience, who) {
				t.Errorf("event.cancelled audience %v lacks %s", cs[0].Audience, who)
			}
		}
		if d := eventData(t, cs[0])["event"]; d["status"] != "cancelled" || d["id"] != e.ID {
			t.Errorf("event.cancelled data %v", d)
		}
		// A started event can no longer change.
		e2 := newEvent(t, s, ko, nil)
		s.Clock.Advance(49 * time.Hour)
		wantProblem(t, s, api(t, s, "PATCH", "/v1/events/"+e2.ID, ko, `{"title":"late"}`), 409, "event_started", "")
		wantProblem(t, s, api(t, s, "POST", "/v1/events/"+e2.ID+"/cancel", ko, ""), 409, "event_started", "")
		wantProblem(t, s, api(t, s, "PUT", "/v1/events/"+e2.ID+"/rsvp", eventsKey(t, s, going), `{"status":"going"}`), 409, "event_started", "")
	})
}

func TestEventSeries(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		// Tuesdays and Thursdays at 19:00 in Paris from 24 March 2026, across
		// the change to summer time on the 29th.
		s.Clock.Set(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		org, fan := s.User(t, "org"), s.User(t, "fan")
		ko := eventsKey(t, s, org)
		first := newEvent(t, s, ko, map[string]any{"date": "2026-03-24T19:00:00+01:00", "timezone": "Europe/Paris",
			"recurrence": "RRULE:FREQ=WEEKLY;BYDAY=TU,TH;COUNT=4", "end_date": "2026-03-24T20:30:00+01:00"})
		if first.SeriesID == nil || *first.SeriesID != first.ID || *first.Recurrence != "FREQ=WEEKLY;BYDAY=TU,TH;COUNT=4" {
			t.Fatalf("first occurrence: %+v", first)
		}
		page := decode[httpapi.List[httpapi.SportsEvent]](t, api(t, s, "GET", "/v1/events?series_id="+first.ID, ko, ""), 200)
		want := []string{"2026-03-24T18:00:00.000Z", "2026-03-26T18:00:00.000Z", "2026-03-31T17:00:00.000Z", "2026-04-02T17:00:00.000Z"}
		if len(page.Data) != len(want) {
			t.Fatalf("series has %d occurrences: %+v", len(page.Data), page.Data)
		}
		for i, e := range page.Data {
			if e.Date != want[i] || *e.SeriesID != first.ID {
				t.Errorf("occurrence %d starts %s, want %s", i, e.Date, want[i])
			}
			end, _ := time.Parse(time.RFC3339, e.EndDate)
			start, _ := time.Parse(time.RFC3339, e.Date)
			if end.Sub(start) != 90*time.Minute {
				t.Errorf("occurrence %d lasts %s", i, end.Sub(start))
			}
		}
		if n := countEvents(t, s, outbox.EventCreated); n != 4 {
			t.Fatalf("%d event.created for 4 occurrences", n)
		}
		third := page.Data[2].ID
		rsvp(t, s, eventsKey(t, s, fan), third, "going")

		// A series-wide change applies to each occurrence, and only to fields
		// that make sense for all of them.
		list := decode[httpapi.List[httpapi.SportsEvent]](t, api(t, s, "PATCH", "/v1/events/"+third+"/series", ko, `{"title":"Club night","location":"Salle B"}`), 200)
		if len(list.Data) != 4 || getEvent(t, s, ko, page.Data[3].ID).Title != "Club night" {
			t.Fatalf("series update: %+v", list.Data)
		}
		if n := apptest.Notifications(t, s.App.DB, fan.ID, notify.KindEventUpdated); len(n) != 1 {
			t.Fatalf("the attendee of one occurrence got %d notifications", len(n))
		}
		wantProblem(t, s, api(t, s, "PATCH", "/v1/events/"+third+"/series", ko, jsonBody(t, map[string]any{"date": "2026-05-01T10:00:00Z"})), 422, "unknown_field", "date")

		// Once the first has passed, cancelling the series cancels the rest.
		s.Clock.Set(time.Date(2026, 3, 25, 12, 0, 0, 0, time.UTC))
		cancelled := decode[httpapi.List[httpapi.SportsEvent]](t, api(t, s, "POST", "/v1/events/"+first.ID+"/series/cancel", ko, `{"reason":"Season over"}`), 200)
		if len(cancelled.Data) != 3 {
			t.Fatalf("cancelled %d occurrences, want 3", len(cancelled.Data))
		}
		if getEvent(t, s, ko, first.ID).Status != "scheduled" || getEvent(t, s, ko, third).Status != "cancelled" {
			t.Fatal("series cancel touched the past occurrence or missed one")
		}
		if n := apptest.Notifications(t, s.App.DB, fan.ID, notify.KindEventCancelled); len(n) != 1 {
			t.Fatalf("attendee got %d cancellation notifications", len(n))
		}
		single := newEvent(t, s, ko, nil)
		wantProblem(t, s, api(t, s, "POST", "/v1/events/"+single.ID+"/series/cancel", ko, ""), 409, "not_a_series", "")
	})
}

func TestInviteOnlyVisibility(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		org, guest, stranger := s.User(t, "org"), s.User(t, "guest"), s.User(t, "stranger")
		ko, kg, ks := eventsKey(t, s, org), eventsKey(t, s, guest), eventsKey(t, s, stranger)
		e := newEvent(t, s, ko, map[string]any{"visibility": "invite_only", "title": "Secret padel"})

		// To a stranger it is exactly a missing event.
		missing := api(t, s, "GET", "/v1/events/evt_0000000000000000000000000a", ks, "")
		hidden := api(t, s, "GET", "/v1/events/"+e.ID, ks, "")
		wantProblem(t, s, missing, 404, "not_found", "")
		wantProblem(t, s, hidden, 404, "not_found", "")
		for _, path := range []string{"/rsvp", "/attendees", "/invitations"} {
			wantProblem(t, s, api(t, s, "GET", "/v1/events/"+e.ID+path, ks, ""), 404, "not_found", "")
		}
		wantProblem(t, s, api(t, s, "PUT", "/v1/events/"+e.ID+"/rsvp", ks, `{"status":"going"}`), 404, "not_found", "")
		wantProblem(t, s, api(t, s, "POST", "/v1/events/"+e.ID+"/invitations", ks, jsonBody(t, map[string]any{"user_ids": []string{stranger.ID}})), 404, "not_found", "")
		if has(searchIDs(t, s, ks, "q=padel"), e.ID) {
			t.Fatal("a stranger finds the invite-only event")
		}

		// Invited, the guest sees, finds and joins it.
		inv := decode[httpapi.List[httpapi.EventInvitation]](t, api(t, s, "POST", "/v1/events/"+e.ID+"/invitations", ko,
			jsonBody(t, map[string]any{"user_ids": []string{guest.ID, guest.ID, org.ID}})), 200)
		if len(inv.Data) != 1 || inv.Data[0].UserID != guest.ID || inv.Data[0].InviterID != org.ID {
			t.Fatalf("invitations: %+v", inv)
		}
		wantProblem(t, s, api(t, s, "POST", "/v1/events/"+e.ID+"/invitations", ko, `{"user_ids":["usr_0000000000000000000000000a"]}`), 422, "unknown_user", "user_ids[0]")
		getEvent(t, s, kg, e.ID)
		if !has(searchIDs(t, s, kg, "q=padel"), e.ID) || !has(searchIDs(t, s, ko, "q=padel"), e.ID) {
			t.Fatal("the guest or the creator does not find the event")
		}
		rsvp(t, s, kg, e.ID, "going")
		wantProblem(t, s, api(t, s, "POST", "/v1/events/"+e.ID+"/invitations", kg, jsonBody(t, map[string]any{"user_ids": []string{stranger.ID}})), 403, "not_event_creator", "")
		wantProblem(t, s, api(t, s, "GET", "/v1/events/"+e.ID+"/invitations", kg, ""), 403, "not_event_creator", "")
		list := decode[httpapi.List[httpapi.EventInvitation]](t, api(t, s, "GET", "/v1/events/"+e.ID+"/invitations", ko, ""), 200)
		if len(list.Data) != 1 {
			t.Fatalf("invitation list: %+v", list)
		}
		// Events about it reach the creator and invitees, never the stranger.
		for _, ev := range append(recorded(t, s, outbox.EventRSVP, e.ID), recorded(t, s, outbox.EventCreated, e.ID)...) {
			if has(ev.Audience, stranger.ID) {
				t.Fatalf("%s reaches the stranger: %v", ev.Type, ev.Audience)
			}
		}

		// A public event turned invite-only keeps those who answered it.
		pub := newEvent(t, s, ko, map[string]any{"title": "Open padel"})
		rsvp(t, s, ks, pub.ID, "maybe")
		decode[httpapi.SportsEvent](t, api(t, s, "PATCH", "/v1/events/"+pub.ID, ko, `{"visibility":"invite_only"}`), 200)
		getEvent(t, s, ks, pub.ID)
		wantProblem(t, s, api(t, s, "GET", "/v1/events/"+pub.ID, eventsKey(t, s, s.User(t, "late")), ""), 404, "not_found", "")

		// A block hides even a public event, both ways.
		open := newEvent(t, s, ko, map[string]any{"title": "Open tennis"})
		block(t, s, stranger, org)
		wantProblem(t, s, api(t, s, "GET", "/v1/events/"+open.ID, ks, ""), 404, "not_found", "")
		if has(searchIDs(t, s, ks, "q=tennis"), open.ID) {
			t.Fatal("a blocked user finds the event")
		}
		getEvent(t, s, ko, open.ID)
	})
}

func TestEventErasure(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		org, a, b, c := s.User(t, "org"), s.User(t, "aaa"), s.User(t, "bbb"), s.User(t, "ccc")
		ko := eventsKey(t, s, org)
		e := newEvent(t, s, ko, map[string]any{"max_participants": 1, "title": "Keep me"})
		rsvp(t, s, eventsKey(t, s, a), e.ID, "going")
		rsvp(t, s, eventsKey(t, s, b), e.ID, "going")
		rsvp(t, s, eventsKey(t, s, c), e.ID, "going")
		// Erasing the one going moves the waitlist up, positions 1..n.
		if err := s.App.Users.Delete(context.Background(), a.ID); err != nil {
			t.Fatal(err)
		}
		got := getEvent(t, s, ko, e.ID)
		if got.GoingCount != 1 || got.WaitlistCount != 1 {
			t.Fatalf("after erasing the attendee: %+v", got)
		}
		if r := rsvp(t, s, eventsKey(t, s, c), e.ID, "going"); r.Status != "waitlisted" || *r.WaitlistPosition != 1 {
			t.Fatalf("waitlist after erasure: %+v", r)
		}
		if len(apptest.Notifications(t, s.App.DB, b.ID, notify.KindEventPromoted)) != 1 {
			t.Fatal("the promoted person was not told")
		}
		// Erasing the organiser cancels what is to come and removes their words.
		if err := s.App.Users.Delete(context.Background(), org.ID); err != nil {
			t.Fatal(err)
		}
		got = getEvent(t, s, eventsKey(t, s, b), e.ID)
		if got.Status != "cancelled" || got.Title != "" || got.Location != "" {
			t.Fatalf("after erasing the organiser: %+v", got)
		}
		if len(apptest.Notifications(t, s.App.DB, b.ID, notify.KindEventCancelled)) != 1 {
			t.Fatal("attendees were not told of the cancellation")
		}
		var n int
		if err := s.App.DB.QueryRow(`SELECT COUNT(*) FROM event_rsvps WHERE user_id = $1`, a.ID).Scan(&n); err != nil || n != 0 {
			t.Fatalf("%d RSVPs of the erased attendee remain (%v)", n, err)
		}
		for _, ev := range recorded(t, s, outbox.EventCreated, e.ID) {
			if strings.Contains(string(ev.Payload), "Keep me") {
				t.Fatal("the erased organiser's title lives on in the outbox")
			}
		}
	})
}
