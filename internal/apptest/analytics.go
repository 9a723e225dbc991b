package apptest

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/events"
	"github.com/matchpoint-api/matchpoint/internal/matching"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
	"github.com/matchpoint-api/matchpoint/internal/users"
	"github.com/matchpoint-api/matchpoint/internal/webhooks"
)

// AnalyticsSeed is a scenario with known counts, all on one UTC day (Day),
// for the analytics reports and the dashboard:
//   - sign-ups: 5 (an operator and players p1 to p4);
//   - match requests: 4, from p1 to p2 (tennis, 2 km, accepted), to p3
//     (tennis, 15 km, declined), to p4 (padel, 40 km, accepted), and from p2
//     to p3 (pending);
//   - messages: 3 (p1 sends 2 to p2 in a direct conversation, p2 answers 1);
//   - events: 2 by p1; RSVPs: 4 (p2 and p3 going and p4 maybe to the first,
//     which starts an hour later, p2 going to the second); check-ins: 1 (p2
//     at the first, so its attendance rate is 1/2);
//   - webhook deliveries: 2 (p1's endpoint subscribed to match.accepted),
//     both delivered, when rcv is given;
//   - API requests billed to p1, in the first hour: 3 GET /v1/users/me and
//     2 GET /v1/users/me/verification (404) with KeyP1, 2 GET /v1/users/me
//     with TokenP1 (p1's own OAuth app); 1 GET /v1/users/me by the operator.
//     Active users that day: p1 and the operator.
type AnalyticsSeed struct {
	Day                      time.Time
	Operator, P1, P2, P3, P4 *users.User
	OperatorKey, KeyP1       string
	KeyP1ID, AppP1           string
	TokenP1                  string
	WebhookID                string
	Event1, Event2           *events.Event
}

// SeedAnalytics sets the clock to noon two days ahead and plays the
// scenario, flushing the counted requests at the end. With rcv, the
// service must deliver webhooks to it (WebhookConfig and RunWebhooks).
func (s *Server) SeedAnalytics(t testing.TB, rcv *Receiver) *AnalyticsSeed {
	t.Helper()
	ctx := context.Background()
	day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 2)
	s.Clock.Set(day.Add(12 * time.Hour))
	seed := &AnalyticsSeed{Day: day}
	fail := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	seed.Operator = s.User(t, "ops")
	_, err := s.App.Users.SetTier(ctx, seed.Operator.ID, auth.TierEnterprise, nil)
	fail(err)
	_, err = s.App.Users.SetRole(ctx, seed.Operator.ID, auth.RoleOperator)
	fail(err)
	seed.OperatorKey = s.Key(t, seed.Operator, auth.ScopeRead, auth.ScopeAdmin)
	const lat, lon = 45.764, 4.8357 // Lyon
	player := func(name string, dlat float64) *users.User {
		return s.Player(t, name, Player{Sports: []string{"tennis", "padel"}, Lat: lat + dlat, Lon: lon, RadiusKM: 100})
	}
	seed.P1, seed.P2, seed.P3, seed.P4 = player("player1", 0), player("player2", 0.018), player("player3", 0.135), player("player4", 0.36)

	key, secret, err := s.App.Keys.Create(ctx, apikeysSpec(seed.P1.ID))
	fail(err)
	seed.KeyP1, seed.KeyP1ID = secret, key.ID
	app, appSecret := s.Client(t, oauth.ClientSpec{Name: "P1 App", OwnerID: seed.P1.ID, RedirectURIs: []string{"https://p1.example/cb"}})
	seed.AppP1 = app.ID
	seed.TokenP1 = s.Token(t, seed.P1, app, appSecret, "read").AccessToken

	var p *auth.Principal
	if rcv != nil {
		p, err = s.App.Keys.Authenticate(ctx, seed.KeyP1)
		fail(err)
		sub, _, err := s.App.Webhooks.Create(ctx, p, webhooks.Spec{URL: rcv.URL, Events: []string{"match.accepted"}})
		fail(err)
		seed.WebhookID = sub.ID
		s.Clock.Advance(2 * time.Second) // the challenge goes out a second after creation
		WaitFor(t, "webhook verification", func() bool {
			got, err := s.App.Webhooks.Get(ctx, p, sub.ID)
			return err == nil && got.Status == webhooks.StatusActive
		})
	}

	m1, err := s.App.Matching.Create(ctx, seed.P1.ID, matching.Request{UserID: seed.P2.ID, Sport: "tennis"})
	fail(err)
	_, err = s.App.Matching.Accept(ctx, seed.P2.ID, m1.ID)
	fail(err)
	m2, err := s.App.Matching.Create(ctx, seed.P1.ID, matching.Request{UserID: seed.P3.ID, Sport: "tennis"})
	fail(err)
	_, err = s.App.Matching.Decline(ctx, seed.P3.ID, m2.ID)
	fail(err)
	m3, err := s.App.Matching.Create(ctx, seed.P1.ID, matching.Request{UserID: seed.P4.ID, Sport: "padel"})
	fail(err)
	_, err = s.App.Matching.Accept(ctx, seed.P4.ID, m3.ID)
	fail(err)
	_, err = s.App.Matching.Create(ctx, seed.P2.ID, matching.Request{UserID: seed.P3.ID, Sport: "tennis"})
	fail(err)

	conv, _, err := s.App.Messaging.Create(ctx, seed.P1.ID, []string{seed.P2.ID}, nil)
	fail(err)
	for _, m := range []struct{ from, body string }{{seed.P1.ID, "Tennis on Saturday?"}, {seed.P1.ID, "At the park, 10am"}, {seed.P2.ID, "Deal!"}} {
		_, err := s.App.Messaging.Send(ctx, conv.ID, m.from, m.body, "")
		fail(err)
	}

	get := func(path, token string, want int) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, s.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		fail(err)
		res.Body.Close()
		if res.StatusCode != want {
			t.Fatalf("GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}
	for range 3 {
		get("/v1/users/me", seed.KeyP1, 200)
	}
	for range 2 {
		get("/v1/users/me/verification", seed.KeyP1, 404)
		get("/v1/users/me", seed.TokenP1, 200)
	}
	get("/v1/users/me", seed.OperatorKey, 200)
	fail(s.App.Requests.Flush(ctx))

	start := s.Clock.Now().Add(time.Hour).Truncate(time.Second)
	seed.Event1 = s.Event(t, seed.P1, events.Draft{Title: "Tennis at noon", Date: start})
	seed.Event2 = s.Event(t, seed.P1, events.Draft{Title: "Padel on Sunday", Sport: "padel", Date: start.Add(48 * time.Hour)})
	for _, a := range []struct {
		u      *users.User
		e      *events.Event
		status string
	}{{seed.P2, seed.Event1, events.Going}, {seed.P3, seed.Event1, events.Going}, {seed.P4, seed.Event1, events.Maybe}, {seed.P2, seed.Event2, events.Going}} {
		_, _, err := s.App.Events.Answer(ctx, a.u.ID, a.e.ID, a.status)
		fail(err)
	}
	s.Clock.Set(start.Add(30 * time.Minute))
	_, _, err = s.App.Events.CheckIn(ctx, seed.P1.ID, seed.Event1.ID, seed.P2.ID)
	fail(err)

	if rcv != nil {
		WaitFor(t, "two webhook deliveries", func() bool {
			ds, err := s.App.Webhooks.Deliveries(ctx, p, seed.WebhookID, webhooks.DeliveryFilter{Status: webhooks.DeliverySucceeded}, "", 10)
			return err == nil && len(ds) == 2
		})
	}
	return seed
}

func apikeysSpec(userID string) apikeys.Spec {
	return apikeys.Spec{UserID: userID, Name: "Backend", Scopes: []string{auth.ScopeRead, auth.ScopeWrite, auth.ScopeMatching}}
}
