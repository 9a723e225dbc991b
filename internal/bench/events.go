package bench

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/events"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/secrets"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// benchCity is a city seeded events gather around.
type benchCity struct {
	label    string
	lat, lon float64
	tz       string
}

// benchPlaces are the cities seeded events gather around.
var benchPlaces = []benchCity{
	{"Paris", 48.8566, 2.3522, "Europe/Paris"}, {"Lyon", 45.7640, 4.8357, "Europe/Paris"}, {"Marseille", 43.2965, 5.3698, "Europe/Paris"},
	{"London", 51.5072, -0.1276, "Europe/London"}, {"Manchester", 53.4808, -2.2426, "Europe/London"}, {"Dublin", 53.3498, -6.2603, "Europe/Dublin"},
	{"Berlin", 52.5200, 13.4050, "Europe/Berlin"}, {"Munich", 48.1351, 11.5820, "Europe/Berlin"}, {"Hamburg", 53.5511, 9.9937, "Europe/Berlin"},
	{"Madrid", 40.4168, -3.7038, "Europe/Madrid"}, {"Barcelona", 41.3874, 2.1686, "Europe/Madrid"}, {"Lisbon", 38.7223, -9.1393, "Europe/Lisbon"},
	{"Rome", 41.9028, 12.4964, "Europe/Rome"}, {"Milan", 45.4642, 9.1900, "Europe/Rome"}, {"Amsterdam", 52.3676, 4.9041, "Europe/Amsterdam"},
	{"Brussels", 50.8503, 4.3517, "Europe/Brussels"}, {"Zurich", 47.3769, 8.5417, "Europe/Zurich"}, {"Vienna", 48.2082, 16.3738, "Europe/Vienna"},
	{"Prague", 50.0755, 14.4378, "Europe/Prague"}, {"Warsaw", 52.2297, 21.0122, "Europe/Warsaw"}, {"Stockholm", 59.3293, 18.0686, "Europe/Stockholm"},
	{"Copenhagen", 55.6761, 12.5683, "Europe/Copenhagen"}, {"Oslo", 59.9139, 10.7522, "Europe/Oslo"}, {"Helsinki", 60.1699, 24.9384, "Europe/Helsinki"},
	{"New York", 40.7128, -74.0060, "America/New_York"}, {"Boston", 42.3601, -71.0589, "America/New_York"}, {"Chicago", 41.8781, -87.6298, "America/Chicago"},
	{"Toronto", 43.6532, -79.3832, "America/Toronto"}, {"Montreal", 45.5019, -73.5674, "America/Toronto"}, {"San Francisco", 37.7749, -122.4194, "America/Los_Angeles"},
	{"Los Angeles", 34.0522, -118.2437, "America/Los_Angeles"}, {"Seattle", 47.6062, -122.3321, "America/Los_Angeles"}, {"Austin", 30.2672, -97.7431, "America/Chicago"},
	{"Mexico City", 19.4326, -99.1332, "America/Mexico_City"}, {"São Paulo", -23.5505, -46.6333, "America/Sao_Paulo"}, {"Buenos Aires", -34.6037, -58.3816, "America/Argentina/Buenos_Aires"},
	{"Sydney", -33.8688, 151.2093, "Australia/Sydney"}, {"Melbourne", -37.8136, 144.9631, "Australia/Melbourne"}, {"Tokyo", 35.6762, 139.6503, "Asia/Tokyo"},
	{"Singapore", 1.3521, 103.8198, "Asia/Singapore"},
}

// EventsResult holds the events benchmark's figures.
type EventsResult struct {
	Engine    string
	Get       Stats // GET /v1/events/{id}: the floor of a read
	Search    Stats // near a place with a text query: the target
	Text      Stats // text query alone
	Near      Stats // near a place alone
	Contended Stats // RSVPs, every client on one event
	Spread    Stats // RSVPs, each client on its own event
}

// Events seeds n events and measures discovery (GET /v1/events near a place
// with a text query) and the RSVP path under contention, over HTTP. The
// baselines are a read of one event, and RSVPs spread over as many events
// as clients (no one waits for another's lock).
func Events(ctx context.Context, o Options, n int, out, progress io.Writer) (*EventsResult, error) {
	e, err := start(ctx, o)
	if err != nil {
		return nil, err
	}
	defer e.close()
	now := e.app.Clock.Now()
	people, err := benchPeople(ctx, e, 20+2*o.Concurrency)
	if err != nil {
		return nil, err
	}
	creators := make([]string, 20)
	for i := range creators {
		creators[i] = people[i].ID
	}
	fmt.Fprintf(progress, "bench events: seeding %d events on %s...\n", n, e.Engine)
	t0 := time.Now()
	places := make([]store.SeedPlace, len(benchPlaces))
	for i, p := range benchPlaces {
		places[i] = store.SeedPlace{Label: p.label, Lat: p.lat, Lon: p.lon, Timezone: p.tz}
	}
	seeded, err := store.SeedEvents(ctx, e.app.DB, n, rand.New(rand.NewPCG(1, 2)), creators, places, now)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "bench events: seeded in %s; analysing\n", time.Since(t0).Round(time.Millisecond))
	if err := e.app.DB.Analyze(ctx); err != nil {
		return nil, err
	}
	if e.app.DB.Dialect == store.SQLite {
		// Fold the seeding's write-ahead log into the database now, not
		// in the middle of the first measured writes.
		if _, err := e.app.DB.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			return nil, err
		}
	}
	_, key, err := e.app.Keys.Create(ctx, apikeys.Spec{UserID: e.user.ID, Name: "bench", Scopes: []string{auth.ScopeRead, auth.ScopeEvents}})
	if err != nil {
		return nil, err
	}
	c := newHTTPClient(o.Concurrency)
	words := store.SeedWords()
	rngs := make([]*rand.Rand, o.Concurrency)
	for i := range rngs {
		rngs[i] = rand.New(rand.NewPCG(uint64(i), 7))
	}
	nearQ := func(r *rand.Rand) string {
		p := benchPlaces[r.IntN(len(benchPlaces))]
		return "latitude=" + strconv.FormatFloat(p.lat, 'f', 4, 64) + "&longitude=" + strconv.FormatFloat(p.lon, 'f', 4, 64)
	}
	textQ := func(r *rand.Rand) string { return "q=" + url.QueryEscape(words[r.IntN(len(words))]) }
	search := func(query func(r *rand.Rand) string) func(int) (bool, bool) {
		return func(w int) (bool, bool) { return get(c, e.url+"/v1/events?"+query(rngs[w]), key), true }
	}
	getOne := func(w int) (bool, bool) {
		return get(c, e.url+"/v1/events/"+seeded[rngs[w].IntN(len(seeded))], key), true
	}

	res := &EventsResult{Engine: e.Engine}
	// On PostgreSQL, the server processes' CPU per request too: most of a
	// search's work is theirs.
	var db *dbCPU
	if e.Engine == "postgres" {
		admin, err := sql.Open("pgx", o.DatabaseURL)
		if err != nil {
			return nil, err
		}
		defer admin.Close()
		db = &dbCPU{admin: admin, app: e.appName}
	}
	measure := func(name string, work func(int) (bool, bool)) (Stats, string) {
		db.start(ctx)
		st, cpu := cpuRun(name, o.Concurrency, o.Duration, work)
		l := line(st, cpu)
		if db != nil && st.Requests > 0 {
			l += fmt.Sprintf("   db cpu %5.2f ms/req", ms(db.since(ctx)/time.Duration(st.Requests)))
		}
		return st, l
	}
	fmt.Fprintf(out, "bench events: %s, %d events, concurrency %d, %d rounds of %s each, interleaved\n", e.Engine, n, o.Concurrency, o.Rounds, o.Duration)
	run("warm-up", o.Concurrency, time.Second, search(func(r *rand.Rand) string { return nearQ(r) + "&" + textQ(r) }))
	var gets, both, texts, nears []Stats
	for i := range o.Rounds {
		g, gl := measure("GET /v1/events/{id}", getOne)
		b, bl := measure("search: near a place + q", search(func(r *rand.Rand) string { return nearQ(r) + "&" + textQ(r) }))
		t, tl := measure("search: q alone", search(textQ))
		nr, nl := measure("search: near a place alone", search(nearQ))
		fmt.Fprintf(out, "  round %d\n    %s\n    %s\n    %s\n    %s\n", i+1, gl, bl, tl, nl)
		gets, both, texts, nears = append(gets, g), append(both, b), append(texts, t), append(nears, nr)
	}
	res.Get, res.Search, res.Text, res.Near = medianRound(gets), medianRound(both), medianRound(texts), medianRound(nears)

	// RSVPs: each client answers going, then withdraws, again and again.
	// Contended: all on one 10-place event, so every answer waits for the
	// event's row lock and most land on the waitlist and move it.
	fmt.Fprintf(progress, "bench events: RSVPs\n")
	clients := people[20:]
	keys := make([]string, len(clients))
	for i, u := range clients {
		// Enterprise, as the bench account: an allowance no run reaches.
		if _, err = e.app.Users.SetTier(ctx, u.ID, "enterprise", nil); err != nil {
			return nil, err
		}
		if _, keys[i], err = e.app.Keys.Create(ctx, apikeys.Spec{UserID: u.ID, Name: "bench", Scopes: []string{auth.ScopeEvents}}); err != nil {
			return nil, err
		}
	}
	newEvent := func() (string, error) {
		ev, err := e.app.Events.Create(ctx, creators[0], events.Draft{Title: "Busy court", Sport: "tennis", Location: "Lyon",
			Date: now.Add(24 * time.Hour), MaxParticipants: 10})
		if err != nil {
			return "", err
		}
		return ev.ID, nil
	}
	hot, err := newEvent()
	if err != nil {
		return nil, err
	}
	own := make([]string, o.Concurrency)
	for i := range own {
		if own[i], err = newEvent(); err != nil {
			return nil, err
		}
	}
	// Two clients per worker take turns (going, going, withdraw, withdraw),
	// so a worker never waits on its own lock. Each run starts the cycle
	// afresh: answering going again changes nothing, withdrawing twice would.
	answer := func(event func(w int) string) func(int) (bool, bool) {
		step := make([]int, o.Concurrency)
		return func(w int) (bool, bool) {
			k := keys[2*w+step[w]%2]
			var ok bool
			if step[w]/2%2 == 0 {
				ok = send(c, http.MethodPut, e.url+"/v1/events/"+event(w)+"/rsvp", k, `{"status":"going"}`, http.StatusOK)
			} else {
				ok = send(c, http.MethodDelete, e.url+"/v1/events/"+event(w)+"/rsvp", k, "", http.StatusNoContent)
			}
			step[w]++
			return ok, true
		}
	}
	run("warm-up", o.Concurrency, time.Second, answer(func(int) string { return hot }))
	var hots, spreads []Stats
	for i := range o.Rounds {
		h, hc := cpuRun("RSVP, all clients on one event", o.Concurrency, o.Duration, answer(func(int) string { return hot }))
		sp, sc := cpuRun("RSVP, one event per client", o.Concurrency, o.Duration, answer(func(w int) string { return own[w] }))
		fmt.Fprintf(out, "  round %d\n    %s\n    %s\n", i+1, line(h, hc), line(sp, sc))
		hots, spreads = append(hots, h), append(spreads, sp)
	}
	res.Contended, res.Spread = medianRound(hots), medianRound(spreads)
	fmt.Fprintf(out, "  median rounds: search near a place + q p50 %.2f ms p99 %.2f ms (%.1fx / %.1fx a single-event read); "+
		"contended RSVP p50 %.2f ms p99 %.2f ms (%.1fx / %.1fx uncontended)\n",
		ms(res.Search.P50), ms(res.Search.P99), ratio(res.Search.P50, res.Get.P50), ratio(res.Search.P99, res.Get.P99),
		ms(res.Contended.P50), ms(res.Contended.P99), ratio(res.Contended.P50, res.Spread.P50), ratio(res.Contended.P99, res.Spread.P99))
	return res, nil
}

// cpuRun is run plus the process's CPU time per request (user and system,
// every goroutine: server, database when it is SQLite, and the clients),
// the figure a loaded machine does not inflate the way it inflates latency.
func cpuRun(name string, conc int, d time.Duration, work func(worker int) (bool, bool)) (Stats, time.Duration) {
	before := processCPU()
	st := run(name, conc, d, work)
	if st.Requests == 0 {
		return st, 0
	}
	return st, (processCPU() - before) / time.Duration(st.Requests)
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// line is a Stats line with CPU per request.
func line(st Stats, cpu time.Duration) string {
	return fmt.Sprintf("%s   cpu %5.2f ms/req", st, ms(cpu))
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// medianRound is the round with the median p99.
func medianRound(rounds []Stats) Stats {
	s := slices.Clone(rounds)
	slices.SortFunc(s, func(a, b Stats) int { return int(a.P99 - b.P99) })
	return s[len(s)/2]
}

// benchPeople makes accounts directly in the store with one password hash
// (hashing is not what is measured).
func benchPeople(ctx context.Context, e *env, n int) ([]*users.User, error) {
	hash := secrets.HashPassword(benchPassword)
	st := store.NewUsers(e.app.DB)
	now := e.app.Clock.Now()
	out := make([]*users.User, n)
	for i := range out {
		name := "bench" + strconv.Itoa(i)
		u := &users.User{ID: ids.New(ids.User), Email: name + "@example.com", EmailKey: name + "@example.com", Username: name, UsernameKey: name, FirstName: name,
			Sports: []string{}, SkillLevels: map[string]string{}, Availability: []users.Slot{},
			TravelRadiusKM: users.DefaultTravelRadiusKM, Timezone: "UTC", Privacy: users.DefaultPrivacy,
			Role: auth.RoleMember, Tier: users.TierFree, PasswordHash: hash, CreatedAt: now, UpdatedAt: now}
		if err := st.CreateUser(ctx, u, nil); err != nil {
			return nil, err
		}
		out[i] = u
	}
	return out, nil
}

func send(c *http.Client, method, u, token, body string, want int) bool {
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode == want
}
