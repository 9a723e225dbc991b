package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// kindsFor lists the event types a receiver got (deliveries only, in order).
func kindsFor(t *testing.T, r *apptest.Receiver) []string {
	t.Helper()
	var out []string
	seen := map[string]bool{}
	for _, d := range r.Deliveries() {
		// Delivery is at least once: an attempt that timed out on a busy
		// machine is sent again with the same webhook-id, which receivers
		// deduplicate on.
		if id := d.Header.Get("Webhook-Id"); id != "" {
			if seen[id] {
				continue
			}
			seen[id] = true
		}
		out = append(out, parseEnvelope(t, d.Body).Type)
	}
	return out
}

// waitKinds waits until the receiver has got want (in any order) and checks
// it got nothing else.
func waitKinds(t *testing.T, r *apptest.Receiver, want ...string) {
	t.Helper()
	sort.Strings(want)
	apptest.WaitFor(t, "deliveries "+join(want), func() bool { return len(kindsFor(t, r)) >= len(want) })
	got := kindsFor(t, r)
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Fatalf("received %v, want %v", got, want)
	}
}

func join(ss []string) string {
	b, _ := json.Marshal(ss)
	return string(b)
}

// TestMatchEventsReachSubscribers: the four match.* kinds reach a webhook
// subscriber end to end, each with data.match in the document's shape, and
// only subscribers who are one of the two people receive them.
func TestMatchEventsReachSubscribers(t *testing.T) {
	for _, d := range testdb.Engines() {
		t.Run(string(d), func(t *testing.T) {
			ca := apptest.NewCA(t)
			s := apptest.StartWith(t, d, apptest.WebhookConfig(ca, "1s"))
			s.RunWebhooks(t)
			tennis := apptest.Player{Sports: []string{"tennis"}, Levels: map[string]string{"tennis": "intermediate"}, Lat: 45.76, Lon: 4.84}
			ann, bob, carl := s.Player(t, "ann", tennis), s.Player(t, "bob", tennis), s.Player(t, "carl", tennis)
			rcv := map[string]*apptest.Receiver{}
			for _, u := range []*users.User{ann, bob, carl} {
				rcv[u.ID] = apptest.NewReceiver(t, ca)
				subscribe(t, s, s.Key(t, u, "read", "write", "matching"), `{"url":"`+rcv[u.ID].URL+`","events":["match.*"]}`)
			}
			ctx := context.Background()

			// Bob asks Ann, Ann accepts: both hear both; Carl hears nothing.
			m := s.Match(t, bob, ann, true)
			waitKinds(t, rcv[ann.ID], "match.created", "match.accepted")
			waitKinds(t, rcv[bob.ID], "match.created", "match.accepted")
			env := parseEnvelope(t, rcv[ann.ID].Deliveries()[0].Body)
			var data struct {
				ID                 string   `json:"id"`
				User1ID            string   `json:"user1_id"`
				User2ID            string   `json:"user2_id"`
				CompatibilityScore *int     `json:"compatibility_score"`
				CommonSports       []string `json:"common_sports"`
				CreatedAt          string   `json:"created_at"`
			}
			if err := json.Unmarshal(env.Data["match"], &data); err != nil {
				t.Fatal(err)
			}
			if data.ID != m.ID || data.User1ID != bob.ID || data.User2ID != ann.ID || data.CompatibilityScore == nil ||
				!slices.Equal(data.CommonSports, []string{"tennis"}) || data.CreatedAt == "" {
				t.Fatalf("data.match = %s", env.Data["match"])
			}

			// Carl asks Bob, Bob declines.
			m2 := s.Match(t, carl, bob, false)
			if _, err := s.App.Matching.Decline(ctx, bob.ID, m2.ID); err != nil {
				t.Fatal(err)
			}
			waitKinds(t, rcv[carl.ID], "match.created", "match.declined")
			waitKinds(t, rcv[bob.ID], "match.created", "match.accepted", "match.created", "match.declined")

			// Ann asks Carl, nobody answers: it expires.
			s.Match(t, ann, carl, false)
			s.Clock.Advance(s.App.Matching.Settings().RequestTTL + time.Minute)
			if n, err := s.App.Matching.ExpireDue(ctx); err != nil || n != 1 {
				t.Fatalf("expired %d, %v", n, err)
			}
			waitKinds(t, rcv[carl.ID], "match.created", "match.declined", "match.created", "match.expired")
			waitKinds(t, rcv[ann.ID], "match.created", "match.accepted", "match.created", "match.expired")
			if got := kindsFor(t, rcv[bob.ID]); len(got) != 4 {
				t.Fatalf("bob got %v: another pair's events", got)
			}
		})
	}
}

// TestEventEventsReachSubscribers: the four event.* kinds reach a webhook
// subscriber end to end with data.event in the document's shape (and
// data.rsvp for event.rsvp), for the organiser and the people who answered;
// a bystander's subscription receives none of them.
func TestEventEventsReachSubscribers(t *testing.T) {
	for _, d := range testdb.Engines() {
		t.Run(string(d), func(t *testing.T) {
			ca := apptest.NewCA(t)
			s := apptest.StartWith(t, d, apptest.WebhookConfig(ca, "1s"))
			s.RunWebhooks(t)
			org, player, bystander := s.User(t, "organiser"), s.User(t, "player"), s.User(t, "bystander")
			rcv := map[string]*apptest.Receiver{}
			for _, u := range []*users.User{org, player, bystander} {
				rcv[u.ID] = apptest.NewReceiver(t, ca)
				subscribe(t, s, s.Key(t, u, "read", "write", "events"), `{"url":"`+rcv[u.ID].URL+`","events":["event.*"]}`)
			}
			ko, kp := eventsKey(t, s, org), eventsKey(t, s, player)
			e := newEvent(t, s, ko, map[string]any{"title": "Friday five-a-side", "sport": "football", "max_participants": 10})
			waitKinds(t, rcv[org.ID], "event.created")
			rsvp(t, s, kp, e.ID, "going")
			if r := api(t, s, "PATCH", "/v1/events/"+e.ID, ko, `{"title":"Friday five-a-side, pitch 2"}`); r.Status != 200 {
				t.Fatalf("update: %d %s", r.Status, r.Body)
			}
			if r := api(t, s, "POST", "/v1/events/"+e.ID+"/cancel", ko, `{}`); r.Status != 200 {
				t.Fatalf("cancel: %d %s", r.Status, r.Body)
			}
			waitKinds(t, rcv[org.ID], "event.created", "event.rsvp", "event.updated", "event.cancelled")
			waitKinds(t, rcv[player.ID], "event.rsvp", "event.updated", "event.cancelled")

			var created struct {
				ID              string `json:"id"`
				Title           string `json:"title"`
				Description     string `json:"description"`
				Sport           string `json:"sport"`
				Location        string `json:"location"`
				Date            string `json:"date"`
				MaxParticipants int    `json:"max_participants"`
				CreatorID       string `json:"creator_id"`
				CreatedAt       string `json:"created_at"`
			}
			env := parseEnvelope(t, rcv[org.ID].Deliveries()[0].Body)
			if err := json.Unmarshal(env.Data["event"], &created); err != nil {
				t.Fatal(err)
			}
			if created.ID != e.ID || created.Title != "Friday five-a-side" || created.Sport != "football" || created.MaxParticipants != 10 ||
				created.CreatorID != org.ID || created.Date == "" || created.CreatedAt == "" || created.Location == "" {
				t.Fatalf("data.event = %s", env.Data["event"])
			}
			for _, dl := range rcv[player.ID].Deliveries() {
				if env := parseEnvelope(t, dl.Body); env.Type == "event.rsvp" && (env.Data["rsvp"] == nil || env.Data["event"] == nil) {
					t.Fatalf("event.rsvp without data.rsvp and data.event: %s", dl.Body)
				}
			}
			if got := kindsFor(t, rcv[bystander.ID]); len(got) != 0 {
				t.Fatalf("a bystander received %v", got)
			}
		})
	}
}
