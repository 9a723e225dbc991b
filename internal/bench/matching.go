package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
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
}

// Matching seeds each size of population and measures POST /v1/matches/find
// from people in the most populous place (the dense case) and in villages
// (the sparse case), over HTTP.
func Matching(ctx context.Context, o MatchingOptions, out io.Writer) error {
	for _, n := range o.Sizes {
		if err := matchingSize(ctx, o, n, out); err != nil {
			return err
		}
	}
	return nil
}

func matchingSize(ctx context.Context, o MatchingOptions, n int, out io.Writer) error {
	e, err := start(ctx, o.Options)
	if err != nil {
		return err
	}
	defer e.close()
	places := geo.Default().Places()
	big := &places[0]
	const sample = 200
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
	g := synth.New(synth.Options{Seed: int64(n), Tag: "b"})
	sum, err := synth.Seed(ctx, e.app.DB, g, n, 10000, "", synth.ProgressBar(o.Stderr, fmt.Sprintf("seed %d users (%s)", n, e.Engine), n),
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
	if _, err := e.app.DB.ExecContext(ctx, "ANALYZE"); err != nil {
		return err
	}
	fmt.Fprintf(out, "bench matching: %s, %d users (%.0f users/s seeded, %d in %s), concurrency %d, %s per case\n",
		e.Engine, n, sum.PerSecond, seen[0], big.Name, o.Concurrency, o.Duration)
	c := newHTTPClient(o.Concurrency)
	for _, cs := range []struct {
		name   string
		people []*users.User
	}{{"dense: " + big.Name, dense}, {"sparse: villages < 3000 people", sparse}} {
		var ss []searcher
		for _, u := range cs.people {
			_, k, err := e.app.Keys.Create(ctx, apikeys.Spec{UserID: u.ID, Name: "bench", Scopes: []string{"matching"}})
			if err != nil {
				return err
			}
			ss = append(ss, searcher{key: k, sport: u.Sports[0]})
		}
		if len(ss) == 0 {
			fmt.Fprintf(out, "  %s: nobody to search from\n", cs.name)
			continue
		}
		var found, calls atomic.Int64
		call := func(int) (bool, bool) {
			s := ss[int(calls.Add(1))%len(ss)]
			status, body := post(c, e.url+"/v1/matches/find", s.key, `{"sports":["`+s.sport+`"],"limit":20}`)
			var l struct{ Data []json.RawMessage }
			_ = json.Unmarshal(body, &l)
			found.Add(int64(len(l.Data)))
			return status == http.StatusOK, true
		}
		run("warm-up", o.Concurrency, time.Second, call)
		found.Store(0)
		st := run("POST /v1/matches/find, "+cs.name, o.Concurrency, o.Duration, call)
		fmt.Fprintf(out, "  %s   (%.1f results per search)\n", st, float64(found.Load())/math.Max(1, float64(st.Requests)))
	}
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
