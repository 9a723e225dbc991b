package store_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/events"
	idgen "github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// BenchmarkEventsSearch measures the store's share of GET /v1/events over
// seeded events (MATCHPOINT_BENCH_EVENTS, default 100,000, around 40
// places, as matchpoint bench events seeds them): near a place (25 km)
// with one word, the word alone, the place alone. Without HTTP and JSON in
// the way, ns/op is the queries' own cost.
//
//	go test ./internal/store -run '^$' -bench EventsSearch -benchtime 2s
func BenchmarkEventsSearch(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("MATCHPOINT_BENCH_EVENTS")); err == nil && v > 0 {
		n = v
	}
	for _, d := range testdb.Engines() {
		b.Run(string(d), func(b *testing.B) {
			ctx := context.Background()
			db := testdb.Open(b, testdb.NewURL(b, d))
			now := time.Now().UTC()
			u := &users.User{ID: idgen.New(idgen.User), Email: "seed@example.com", Username: "seeder", Sports: []string{},
				SkillLevels: map[string]string{}, Availability: []users.Slot{}, Timezone: "UTC", Privacy: users.DefaultPrivacy,
				Role: auth.RoleMember, Tier: users.TierFree, CreatedAt: now, UpdatedAt: now}
			if err := store.NewUsers(db).CreateUser(ctx, u, nil); err != nil {
				b.Fatal(err)
			}
			places := make([]store.SeedPlace, 40)
			prng := rand.New(rand.NewPCG(5, 6))
			for i := range places {
				places[i] = store.SeedPlace{Label: "p" + strconv.Itoa(i), Lat: prng.Float64()*120 - 60, Lon: prng.Float64()*360 - 180}
			}
			if _, err := store.SeedEvents(ctx, db, n, rand.New(rand.NewPCG(1, 2)), []string{u.ID}, places, now); err != nil {
				b.Fatal(err)
			}
			if err := db.Analyze(ctx); err != nil {
				b.Fatal(err)
			}
			st := store.NewEvents(db)
			words := store.SeedWords()
			viewer := idgen.New(idgen.User)
			search := func(b *testing.B, near, text bool) {
				rng := rand.New(rand.NewPCG(9, 9))
				found := 0
				cpu0 := processCPU()
				for b.Loop() {
					q := &events.Query{ViewerID: viewer, From: now, SkillRank: -1, Sort: events.SortStart, RadiusKM: events.DefaultRadiusKM}
					if near {
						p := places[rng.IntN(len(places))]
						q.Center = &events.Point{Lat: p.Lat, Lon: p.Lon}
					}
					if text {
						q.Terms = []string{words[rng.IntN(len(words))]}
					}
					f, err := st.Search(ctx, q, 20)
					if err != nil {
						b.Fatal(err)
					}
					found += len(f)
				}
				if found == 0 {
					b.Fatal("no search found anything")
				}
				if cpu := processCPU() - cpu0; cpu > 0 {
					b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
				}
			}
			b.Run("near+q", func(b *testing.B) { search(b, true, true) })
			b.Run("q", func(b *testing.B) { search(b, false, true) })
			b.Run("near", func(b *testing.B) { search(b, true, false) })
		})
	}
}

// processCPU is the CPU time (user and system, every thread) the process
// has used, from /proc (10 ms ticks); 0 where there is no /proc.
func processCPU() time.Duration {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * 10 * time.Millisecond
}
