package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/httpapi"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// eventsKey is an API key of u with the scopes events need.
func eventsKey(t testing.TB, s *apptest.Server, u *users.User) string {
	t.Helper()
	return keyOf(t, s.App, u.ID, "read", "write", "events")
}

// jsonBody encodes v.
func jsonBody(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// at formats a time as the API accepts it.
func at(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// newEvent creates an event through the API, with defaults for what body
// leaves out.
func newEvent(t testing.TB, s *apptest.Server, key string, body map[string]any) httpapi.SportsEvent {
	t.Helper()
	full := map[string]any{"title": "Evening tennis", "sport": "tennis", "location": "Parc de la Tête d'Or, Lyon",
		"date": at(s.Clock.Now().Add(48 * time.Hour)), "max_participants": 10}
	for k, v := range body {
		full[k] = v
	}
	return decode[httpapi.SportsEvent](t, api(t, s, "POST", "/v1/events", key, jsonBody(t, full)), 201)
}

// rsvp answers an event.
func rsvp(t testing.TB, s *apptest.Server, key, eventID, status string) httpapi.EventRSVP {
	t.Helper()
	return decode[httpapi.EventRSVP](t, api(t, s, "PUT", "/v1/events/"+eventID+"/rsvp", key, `{"status":"`+status+`"}`), 200)
}

// getEvent reads an event.
func getEvent(t testing.TB, s *apptest.Server, key, id string) httpapi.SportsEvent {
	t.Helper()
	return decode[httpapi.SportsEvent](t, api(t, s, "GET", "/v1/events/"+id, key, ""), 200)
}

// attendees reads every page of an event's attendee list.
func attendees(t testing.TB, base, key, eventID, query string) []httpapi.EventAttendee {
	t.Helper()
	var all []httpapi.EventAttendee
	cursor := ""
	for {
		q := url.Values{"limit": {"100"}}
		if query != "" {
			q, _ = url.ParseQuery(query + "&limit=100")
		}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		page := decode[httpapi.List[httpapi.EventAttendee]](t, nodeAPI(t, base, "GET", "/v1/events/"+eventID+"/attendees?"+q.Encode(), key, ""), 200)
		all = append(all, page.Data...)
		if !page.HasMore {
			return all
		}
		cursor = page.NextCursor
	}
}

// searchIDs runs GET /v1/events with query and returns the ids found, every
// page followed.
func searchIDs(t testing.TB, s *apptest.Server, key, query string) []string {
	t.Helper()
	var out []string
	cursor := ""
	for range 100 {
		q := query
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		page := decode[httpapi.List[httpapi.SportsEvent]](t, api(t, s, "GET", "/v1/events?"+q, key, ""), 200)
		for _, e := range page.Data {
			out = append(out, e.ID)
		}
		if !page.HasMore {
			return out
		}
		cursor = page.NextCursor
	}
	t.Fatal("more than 100 pages")
	return nil
}

// recorded lists the outbox events of a kind about a sports event.
func recorded(t testing.TB, s *apptest.Server, kind, eventID string) []outbox.Event {
	t.Helper()
	evs, err := s.App.Outbox.Recorded(context.Background(), 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	var out []outbox.Event
	for _, e := range evs {
		if e.Type == kind && strings.Contains(string(e.Payload), fmt.Sprintf(`"id":%q`, eventID)) {
			out = append(out, e)
		}
	}
	return out
}

// eventData decodes an outbox event's data.
func eventData(t testing.TB, e outbox.Event) map[string]map[string]any {
	t.Helper()
	var env struct {
		Data map[string]map[string]any `json:"data"`
	}
	if err := json.Unmarshal(e.Payload, &env); err != nil {
		t.Fatal(err)
	}
	return env.Data
}

// block records that a blocked b (the blocks API belongs to matching).
func block(t testing.TB, s *apptest.Server, a, b *users.User) {
	t.Helper()
	if _, err := s.App.DB.DB.Exec(`INSERT INTO user_blocks (blocker_id, blocked_id, created_at) VALUES ($1, $2, $3)`,
		a.ID, b.ID, s.Clock.Now().UnixMicro()); err != nil {
		t.Fatal(err)
	}
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
