package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/geo"
	"github.com/matchpoint-api/matchpoint/internal/matching"
	"github.com/matchpoint-api/matchpoint/internal/matching/synth"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// MatchingOptions choose what `bench matching` measures.
type MatchingOptions struct {
	Options
	Sizes  []int     // users to seed, one run each
	Stderr io.Writer // progress
}

// searcher is a seeded person who will search, with an API key.
type searcher struct {
	key   string
	sport string
	id    string
}

// Matching seeds a population growing through each size and, at each,
// measures POST /v1/matches/find from people in the most populous place
// (the dense case) and in villages (the sparse case), over HTTP, in rounds
// interleaved with GET /v1/users/me by the same people: the baseline that
// tells this machine's load apart from the search's cost. It also times the
// search in process, without HTTP.
func Matching(ctx context.Context, o MatchingOptions, out io.Writer) error {
	// Searches repeat from a few hundred people: showings must not hold
	// candidates back, or later rounds would search fewer of them.
	o.Tune = func(c *config.Config) { c.MatchSuppressAfter = 1 << 30 }
	e, err := start(ctx, o.Options)
	if err != nil {
		return err
	}
	defer e.close()
	places := geo.Default().Places()
	big := &places[0]
	const sample = 300
	rnd := rand.New(rand.NewPCG(7, 7))
	var dense, sparse []*users.User
	seen := [2]int{}
	keep := func(list *[]*users.User, i int, u *users.User) {
		seen[i]++
		if len(*list) < sample {
			*list = append(*list, u)
		} else if j := rnd.IntN(seen[i]); j < sample {
			(*list)[j] = u
		}
	}
	g := synth.New(synth.Options{Seed: 1, Tag: "b"})
	seeded := 0
	for _, n := range o.Sizes {
		if n <= seeded {
			continue
		}
		sum, err := synth.Seed(ctx, e.app.DB, g, n-seeded, 10000, "", synth.ProgressBar(o.Stderr, fmt.Sprintf("seed %d users (%s)", n, e.Engine), n-seeded),
			func(p synth.Person) {
				if !store.Recommendable(p.User) {
					return
				}
				switch {
				case p.Place == big:
					keep(&dense, 0, p.User)
				case p.Place.Population < 3000:
					keep(&sparse, 1, p.User)
				}
			})
		if err != nil {
			return err
		}
		seeded = n
		if err := e.app.DB.OptimizeMatchIndex(ctx); err != nil {
			return err
		}
		fmt.Fprintf(out, "bench matching: %s, %d users (seeded at %.0f users/s; %d live in %s), concurrency %d, %d rounds of %s\n",
			e.Engine, n, sum.PerSecond, seen[0], big.Name, o.Concurrency, o.Rounds, o.Duration)
		for _, cs := range []struct {
			name   string
			people []*users.User
		}{{"dense (" + big.Name + ")", dense}, {"sparse (villages)", sparse}} {
			if err := matchingCase(ctx, e, o, cs.name, cs.people, out); err != nil {
				return err
			}
		}
	}
	return nil
}

func matchingCase(ctx context.Context, e *env, o MatchingOptions, name string, people []*users.User, out io.Writer) error {
	if len(people) == 0 {
		fmt.Fprintf(out, "  %s: nobody to search from\n", name)
		return nil
	}
	var ss []searcher
	// Enterprise with a limit no run reaches: the rounds measure the work,
	// not the rate limiter refusing the baseline's reads.
	huge := int64(1_000_000_000)
	for _, u := range people {
		if _, err := e.app.Users.SetTier(ctx, u.ID, users.TierEnterprise, &huge); err != nil {
			return err
		}
		_, k, err := e.app.Keys.Create(ctx, apikeys.Spec{UserID: u.ID, Name: "bench", Scopes: []string{"matching", "read"}})
		if err != nil {
			return err
		}
		ss = append(ss, searcher{key: k, sport: u.Sports[0], id: u.ID})
	}

	// The work alone, in process, one search at a time, after one search by
	// each person to warm the caches (the first ones after a bulk load read
	// the database from disk).
	for _, s := range ss {
		if _, _, err := e.app.Matching.Find(ctx, s.id, matching.Criteria{Sports: []string{s.sport}, Limit: 20}); err != nil {
			return err
		}
	}
	var lat []time.Duration
	found := 0
	cpu0 := cpuTime()
	deadline := time.Now().Add(o.Duration)
	for i := 0; time.Now().Before(deadline); i++ {
		s := ss[i%len(ss)]
		t0 := time.Now()
		cs, _, err := e.app.Matching.Find(ctx, s.id, matching.Criteria{Sports: []string{s.sport}, Limit: 20})
		if err != nil {
			return err
		}
		lat = append(lat, time.Since(t0))
		found += len(cs)
	}
	cpu := cpuTime() - cpu0
	slices.Sort(lat)
	fmt.Fprintf(out, "  %s: in process, one at a time: p50 %.2f ms, p99 %.2f ms, %.2f ms of this process's CPU each (%d searches, %.1f results each)\n",
		name, ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100]), ms(cpu/time.Duration(len(lat))), len(lat), float64(found)/float64(len(lat)))

	c := newHTTPClient(o.Concurrency)
	var calls atomic.Int64
	find := func(int) (bool, bool) {
		s := ss[int(calls.Add(1))%len(ss)]
		status, _ := post(c, e.url+"/v1/matches/find", s.key, `{"sports":["`+s.sport+`"],"limit":20}`)
		return status == http.StatusOK, true
	}
	me := func(int) (bool, bool) {
		s := ss[int(calls.Add(1))%len(ss)]
		return get(c, e.url+"/v1/users/me", s.key), true
	}
	// Each key's first use records when it was last used (a write); do that
	// for every key before measuring, as a real client's key would have.
	for _, s := range ss {
		get(c, e.url+"/v1/users/me", s.key)
	}
	run("warm-up", o.Concurrency, time.Second, find)
	var best, base Stats
	for i := range o.Rounds {
		f := run("POST /v1/matches/find", o.Concurrency, o.Duration, find)
		m := run("GET /v1/users/me (baseline)", o.Concurrency, o.Duration, me)
		fmt.Fprintf(out, "    round %d\n      %s\n      %s\n", i+1, f, m)
		if i == 0 || f.P99 < best.P99 {
			best = f
		}
		if i == 0 || m.P99 < base.P99 {
			base = m
		}
	}
	fmt.Fprintf(out, "  %s: best round over HTTP: find p50 %.2f ms p99 %.2f ms %.0f req/s; GET /v1/users/me p50 %.2f ms p99 %.2f ms %.0f req/s (find/baseline p99 %.1fx)\n",
		name, ms(best.P50), ms(best.P99), best.Rate(), ms(base.P50), ms(base.P99), base.Rate(), float64(best.P99)/math.Max(1, float64(base.P99)))
	return nil
}

func post(c *http.Client, u, token, body string) (int, []byte) {
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil {
		return 0, nil
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// QualityResult is the ranking quality of the score and of the baseline.
type QualityResult struct {
	Queries                   int
	OursP10, OursNDCG10       float64
	BaselineP10, BaseNDCG10   float64
	Background, GroupsPlanted int
}

// Quality plants groups of mutually compatible people (same sport, same
// level, the same weekly hours, recently active) among background people of
// the same cities, scattered the same way, and checks how many of each
// member's group-mates the search ranks in its top 10: precision@10 and
// nDCG@10 of the compatibility ranking against a ranking by distance alone,
// on the same candidates.
func Quality(ctx context.Context, o Options, stderr, out io.Writer) (*QualityResult, error) {
	e, err := start(ctx, o)
	if err != nil {
		return nil, err
	}
	defer e.close()
	gz := geo.Default()
	var cities []geo.Place
	for _, name := range []string{"Lyon, France", "Porto", "Denver", "Melbourne, Australia", "Osaka", "Toronto", "Munich", "Seattle"} {
		p, ok := gz.Resolve(name)
		if !ok {
			return nil, fmt.Errorf("bench: %s is not in the gazetteer", name)
		}
		cities = append(cities, p)
	}
	const (
		background = 12000
		groups     = 60
		groupSize  = 11
		spreadKM   = 6
	)
	now := e.app.Clock.Now()
	g := synth.New(synth.Options{Seed: 42, Places: cities, Now: now, Tag: "q"})
	r := g.Rand()
	focus := []string{"tennis", "running", "football", "padel", "badminton"}
	var people []*users.User
	for range background {
		c := &cities[r.IntN(len(cities))]
		lat, lon := g.Near(c.Lat, c.Lon, spreadKM)
		p := g.PersonAt(c, lat, lon)
		p.User.Privacy = users.DefaultPrivacy
		if s := focus[r.IntN(len(focus))]; r.Float64() < 0.7 && !contains(p.User.Sports, s) {
			p.User.Sports = append(p.User.Sports, s)
			p.User.SkillLevels[s] = g.Level()
		}
		people = append(people, p.User)
	}
	type member struct {
		id    string
		sport string
		group int
	}
	var members []member
	groupOf := map[string]int{}
	for gi := range groups {
		c := &cities[gi%len(cities)]
		sport := focus[gi%len(focus)]
		level := 1 + r.IntN(2) // intermediate or advanced
		pool := append(g.Availability(), g.Availability()...)
		for range groupSize {
			lat, lon := g.Near(c.Lat, c.Lon, spreadKM)
			p := g.PersonAt(c, lat, lon)
			u := p.User
			u.Privacy = users.DefaultPrivacy
			// Compatible, not identical: mostly the group's level, some hours
			// of the group's and some of their own, active in the last ten days.
			lv := level
			if r.Float64() < 0.25 {
				lv += []int{-1, 1}[r.IntN(2)]
			}
			u.Sports = []string{sport}
			u.SkillLevels = map[string]string{sport: users.SkillLevels[lv]}
			mine := append([]users.Slot{}, pool[r.IntN(len(pool))], pool[r.IntN(len(pool))])
			u.Availability = append(mine, g.Availability()[0])
			u.TravelRadiusKM = 25
			u.UpdatedAt = now.Add(-time.Duration(r.IntN(240)) * time.Hour)
			people = append(people, u)
			members = append(members, member{u.ID, sport, gi})
			groupOf[u.ID] = gi
		}
	}
	r.Shuffle(len(people), func(i, j int) { people[i], people[j] = people[j], people[i] })
	fmt.Fprintf(stderr, "quality: writing %d background people and %d groups of %d\n", background, groups, groupSize)
	for i := 0; i < len(people); i += 5000 {
		if err := e.app.DB.SeedUsers(ctx, people[i:min(i+5000, len(people))], ""); err != nil {
			return nil, err
		}
	}
	res := &QualityResult{Background: background, GroupsPlanted: groups}
	progress := synth.ProgressBar(stderr, "quality: searches", len(members))
	svc := matching.NewService(store.NewMatching(e.app.DB), e.app.Clock, matching.Settings{SuppressAfter: 1000})
	for i, m := range members {
		for _, byDist := range []bool{false, true} {
			cs, _, err := svc.Find(ctx, m.id, matching.Criteria{Sports: []string{m.sport}, Limit: 10, ByDistance: byDist})
			if err != nil {
				return nil, err
			}
			hits, dcg := 0, 0.0
			for rank, c := range cs {
				if gi, ok := groupOf[c.User.ID]; ok && gi == m.group {
					hits++
					dcg += 1 / math.Log2(float64(rank)+2)
				}
			}
			ideal := 0.0
			for rank := range min(10, groupSize-1) {
				ideal += 1 / math.Log2(float64(rank)+2)
			}
			if byDist {
				res.BaselineP10 += float64(hits) / 10
				res.BaseNDCG10 += dcg / ideal
			} else {
				res.OursP10 += float64(hits) / 10
				res.OursNDCG10 += dcg / ideal
			}
		}
		res.Queries++
		progress(i + 1)
	}
	q := float64(res.Queries)
	res.OursP10, res.OursNDCG10, res.BaselineP10, res.BaseNDCG10 = res.OursP10/q, res.OursNDCG10/q, res.BaselineP10/q, res.BaseNDCG10/q
	fmt.Fprintf(out, "bench matching --quality: %s, %d background people and %d planted groups of %d in %d cities, %d searches (each member, its group's sport, top 10)\n",
		e.Engine, background, groups, groupSize, len(cities), res.Queries)
	fmt.Fprintf(out, "  %-32s precision@10 %.3f   nDCG@10 %.3f\n", "compatibility score (ours)", res.OursP10, res.OursNDCG10)
	fmt.Fprintf(out, "  %-32s precision@10 %.3f   nDCG@10 %.3f\n", "distance only (baseline)", res.BaselineP10, res.BaseNDCG10)
	fmt.Fprintf(out, "  ratio ours / baseline: precision@10 %.1fx, nDCG@10 %.1fx\n", res.OursP10/math.Max(res.BaselineP10, 1e-9), res.OursNDCG10/math.Max(res.BaseNDCG10, 1e-9))
	return res, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// cpuTime is the CPU time this process has used: on a machine shared with
// other work, the cost of a search that the load does not inflate.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
