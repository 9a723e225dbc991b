package e2e

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/events"
	"github.com/matchpoint-api/matchpoint/internal/httpapi"
	"github.com/matchpoint-api/matchpoint/internal/messaging"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// chatter is a person with a key that reads and writes.
type chatter struct {
	*users.User
	key string
}

func chatters(t testing.TB, s *apptest.Server, names ...string) []chatter {
	t.Helper()
	out := make([]chatter, len(names))
	for i, n := range names {
		u := s.User(t, n)
		out[i] = chatter{User: u, key: keyOf(t, s.App, u.ID, "read", "write")}
	}
	return out
}

func startConversation(t testing.TB, s *apptest.Server, by chatter, title string, with ...chatter) httpapi.Conversation {
	t.Helper()
	body := map[string]any{"member_ids": idsOf(with)}
	if title != "" {
		body["title"] = title
	}
	r := api(t, s, "POST", "/v1/conversations", by.key, jsonBody(t, body))
	if r.Status != 201 && r.Status != 200 {
		t.Fatalf("create conversation: %d %s", r.Status, r.Body)
	}
	return decode[httpapi.Conversation](t, r, r.Status)
}

func idsOf(cs []chatter) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func send(t testing.TB, s *apptest.Server, by chatter, convID, body string) messaging.View {
	t.Helper()
	return decode[messaging.View](t, api(t, s, "POST", "/v1/conversations/"+convID+"/messages", by.key, jsonBody(t, map[string]string{"body": body})), 201)
}

func reply(t testing.TB, s *apptest.Server, by chatter, convID, to, body string) messaging.View {
	t.Helper()
	return decode[messaging.View](t, api(t, s, "POST", "/v1/conversations/"+convID+"/messages", by.key,
		jsonBody(t, map[string]string{"body": body, "reply_to": to})), 201)
}

func history(t testing.TB, s *apptest.Server, by chatter, convID string, q url.Values) httpapi.MessageList {
	t.Helper()
	return decode[httpapi.MessageList](t, api(t, s, "GET", "/v1/conversations/"+convID+"/messages?"+q.Encode(), by.key, ""), 200)
}

func conversation(t testing.TB, s *apptest.Server, by chatter, convID string) httpapi.Conversation {
	t.Helper()
	return decode[httpapi.Conversation](t, api(t, s, "GET", "/v1/conversations/"+convID, by.key, ""), 200)
}

func searchMessages(t testing.TB, s *apptest.Server, by chatter, q url.Values) httpapi.List[httpapi.SearchResult] {
	t.Helper()
	return decode[httpapi.List[httpapi.SearchResult]](t, api(t, s, "GET", "/v1/messages/search?"+q.Encode(), by.key, ""), 200)
}

func bodies(ms []messaging.View) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		if m.Body != nil {
			out[i] = *m.Body
		}
	}
	return out
}

// streamed lists a user's stream entries of one kind, oldest first.
func streamed(t testing.TB, s *apptest.Server, userID, kind string) []map[string]any {
	t.Helper()
	rows, err := s.App.DB.QueryContext(context.Background(), `SELECT data FROM stream_events WHERE user_id = $1 AND kind = $2 ORDER BY seq`, userID, kind)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []map[string]any
	for rows.Next() {
		var data string
		if err := rows.Scan(&data); err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// eventConversation makes creator's event titled title, with going
// answering going, and its conversation (asked for by the first of them);
// it returns the conversation's id.
func eventConversation(t testing.TB, s *apptest.Server, creator chatter, title string, going ...chatter) string {
	t.Helper()
	e := s.Event(t, creator.User, events.Draft{Title: title})
	for _, c := range going {
		if r := api(t, s, "PUT", "/v1/events/"+e.ID+"/rsvp", eventsKey(t, s, c.User), `{"status":"going"}`); r.Status >= 300 {
			t.Fatalf("rsvp: %d %s", r.Status, r.Body)
		}
	}
	c := decode[map[string]any](t, api(t, s, "POST", "/v1/events/"+e.ID+"/conversation", going[0].key, ""), 201)
	return c["id"].(string)
}
