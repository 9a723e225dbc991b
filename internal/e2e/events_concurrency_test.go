package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/httpapi"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// The capacity of an event is never exceeded, however many answer at once:
// 200 people answer going at the same moment to an event with 10 places.

const (
	contenders = 200
	places     = 10
	leavers    = 5
)

func TestRSVPCapacityUnderContention(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		org := s.User(t, "org")
		people := apptest.Users(t, s.App, "player", contenders)
		e := newEvent(t, s, eventsKey(t, s, org), map[string]any{"max_participants": places})
		contend(t, []string{s.URL}, eventsKey(t, s, org), e.ID, keysOf(t, s.App, people))
	})
}

// TestRSVPCapacityAcrossNodes is the same race with two service processes
// over one PostgreSQL, requests alternating between them.
func TestRSVPCapacityAcrossNodes(t *testing.T) {
	c := apptest.StartCluster(t, 2)
	org, err := c.App.Users.Register(t.Context(), users.Registration{Email: "org@example.com", Username: "org", Password: apptest.Password})
	if err != nil {
		t.Fatal(err)
	}
	people := apptest.Users(t, c.App, "player", contenders)
	ko := keyOf(t, c.App, org.ID, "read", "events")
	body := jsonBody(t, map[string]any{"title": "Busy court", "sport": "tennis", "location": "Lyon",
		"date": at(time.Now().Add(48 * time.Hour)), "max_participants": places})
	e := decode[httpapi.SportsEvent](t, nodeAPI(t, c.Nodes[0].URL, "POST", "/v1/events", ko, body), 201)
	contend(t, []string{c.Nodes[0].URL, c.Nodes[1].URL}, ko, e.ID, keysOf(t, c.App, people))
}

// keysOf makes an API key with the events scope for each person.
func keysOf(t *testing.T, a *app.App, people []*users.User) []string {
	out := make([]string, len(people))
	for i, u := range people {
		out[i] = keyOf(t, a, u.ID, "events")
	}
	return out
}

// answer sends one request from a goroutine (which may not stop the test).
func answer(base, method, path, key, body string) (int, []byte, error) {
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// together runs fn(i) for i < n from n goroutines released at once.
func together(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}

func contend(t *testing.T, bases []string, orgKey, eventID string, keys []string) {
	t.Helper()
	got := make([]httpapi.EventRSVP, len(keys))
	errs := make([]string, len(keys))
	together(len(keys), func(i int) {
		status, body, err := answer(bases[i%len(bases)], "PUT", "/v1/events/"+eventID+"/rsvp", keys[i], `{"status":"going"}`)
		if err != nil || status != 200 || json.Unmarshal(body, &got[i]) != nil {
			errs[i] = string(body)
			if err != nil {
				errs[i] = err.Error()
			}
		}
	})
	for i, e := range errs {
		if e != "" {
			t.Fatalf("request %d failed: %s", i, e)
		}
	}
	// What each answer said: 10 going, 190 waitlisted at distinct places 1..190.
	going, positions := 0, []int{}
	for _, r := range got {
		switch r.Status {
		case "going":
			going++
		case "waitlisted":
			positions = append(positions, *r.WaitlistPosition)
		default:
			t.Fatalf("answer %+v", r)
		}
	}
	slices.Sort(positions)
	if going != places || len(positions) != contenders-places || positions[0] != 1 || positions[len(positions)-1] != contenders-places ||
		len(slices.Compact(slices.Clone(positions))) != contenders-places {
		t.Fatalf("%d going, waitlist positions %v", going, positions)
	}
	// What the creator reads agrees.
	goingList := attendees(t, bases[0], orgKey, eventID, "status=going")
	waitlist := attendees(t, bases[0], orgKey, eventID, "status=waitlisted")
	if len(goingList) != places || len(waitlist) != contenders-places {
		t.Fatalf("lists: %d going, %d waitlisted", len(goingList), len(waitlist))
	}
	for i, a := range waitlist {
		if *a.WaitlistPosition != i+1 {
			t.Fatalf("waitlist place %d holds position %d", i+1, *a.WaitlistPosition)
		}
	}
	ev := decode[httpapi.SportsEvent](t, nodeAPI(t, bases[0], "GET", "/v1/events/"+eventID, orgKey, ""), 200)
	if ev.GoingCount != places || ev.WaitlistCount != contenders-places || ev.SpotsLeft != 0 {
		t.Fatalf("event counts: %+v", ev)
	}

	// Five of those going withdraw at once: exactly the first five in line
	// move up, and the rest of the line moves up five places, in order.
	keyByUser := map[string]string{}
	for i, r := range got {
		keyByUser[r.UserID] = keys[i]
	}
	together(leavers, func(i int) {
		status, body, err := answer(bases[i%len(bases)], "DELETE", "/v1/events/"+eventID+"/rsvp", keyByUser[goingList[i].User.ID], "")
		if err != nil || status != 204 {
			errs[i] = string(body)
		}
	})
	for i := range leavers {
		if errs[i] != "" {
			t.Fatalf("withdrawal %d failed: %s", i, errs[i])
		}
	}
	var wantGoing []string
	for _, a := range goingList[leavers:] {
		wantGoing = append(wantGoing, a.User.ID)
	}
	for _, a := range waitlist[:leavers] {
		wantGoing = append(wantGoing, a.User.ID)
	}
	var nowGoing []string
	for _, a := range attendees(t, bases[1%len(bases)], orgKey, eventID, "status=going") {
		nowGoing = append(nowGoing, a.User.ID)
	}
	slices.Sort(wantGoing)
	slices.Sort(nowGoing)
	if !slices.Equal(wantGoing, nowGoing) {
		t.Fatalf("going after withdrawals:\n got %v\nwant %v", nowGoing, wantGoing)
	}
	rest := attendees(t, bases[0], orgKey, eventID, "status=waitlisted")
	if len(rest) != contenders-places-leavers {
		t.Fatalf("%d still waitlisted", len(rest))
	}
	for i, a := range rest {
		if *a.WaitlistPosition != i+1 || a.User.ID != waitlist[leavers+i].User.ID {
			t.Fatalf("place %d: %s at position %d, want %s", i+1, a.User.ID, *a.WaitlistPosition, waitlist[leavers+i].User.ID)
		}
	}
}
