package store_test

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/auth"
	idgen "github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/messaging"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// BenchmarkMessagesSearch measures the store's share of
// GET /v1/messages/search over seeded messages (MATCHPOINT_BENCH_MESSAGES,
// default 200,000; conversations of five, the searcher in one in twenty),
// as matchpoint bench messaging seeds them: one word, then two.
//
//	MATCHPOINT_BENCH_MESSAGES=1000000 go test ./internal/store -run '^$' -bench MessagesSearch -benchtime 3s
func BenchmarkMessagesSearch(b *testing.B) {
	n := 200_000
	if v, err := strconv.Atoi(os.Getenv("MATCHPOINT_BENCH_MESSAGES")); err == nil && v > 0 {
		n = v
	}
	for _, d := range testdb.Engines() {
		b.Run(string(d), func(b *testing.B) {
			ctx := context.Background()
			db := testdb.Open(b, testdb.NewURL(b, d))
			now := time.Now().UTC()
			people := seedPeople(b, db, "member", 200, now)
			rng := rand.New(rand.NewPCG(3, 4))
			convs := make([]store.SeedConversation, max(n/1000, 100))
			for i := range convs {
				c := store.SeedConversation{ID: idgen.New(idgen.Conversation)}
				for len(c.Members) < 5 {
					if u := people[1+rng.IntN(len(people)-1)]; !slices.Contains(c.Members, u) {
						c.Members = append(c.Members, u)
					}
				}
				if i%20 == 0 {
					c.Members[4] = people[0]
				}
				convs[i] = c
			}
			if err := store.SeedMessaging(ctx, db, convs, n, rng, now); err != nil {
				b.Fatal(err)
			}
			if err := db.Analyze(ctx); err != nil {
				b.Fatal(err)
			}
			st := store.NewMessaging(db)
			words := store.SeedChatWords()
			for _, terms := range []int{1, 2} {
				b.Run(strconv.Itoa(terms)+"-words", func(b *testing.B) {
					r := rand.New(rand.NewPCG(9, 9))
					found := 0
					cpu0 := processCPU()
					for b.Loop() {
						q := &messaging.SearchQuery{ViewerID: people[0], Limit: 21}
						for range terms {
							q.Terms = append(q.Terms, words[20+r.IntN(len(words)-20)])
						}
						f, err := st.Search(ctx, q)
						if err != nil {
							b.Fatal(err)
						}
						found += len(f)
					}
					if found == 0 {
						b.Fatal("no search found anything")
					}
					if cpu := processCPU() - cpu0; cpu > 0 {
						b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1000, "cpu-ms/op")
					}
				})
			}
		})
	}
}

// seedPeople creates n accounts named prefix1000, prefix1001 ... and
// returns their ids.
func seedPeople(tb testing.TB, db *store.DB, prefix string, n int, now time.Time) []string {
	tb.Helper()
	people := make([]string, n)
	for i := range people {
		name := prefix + strconv.Itoa(1000+i)
		u := &users.User{ID: idgen.New(idgen.User), Email: name + "@example.com", EmailKey: name + "@example.com", Username: name, UsernameKey: name,
			Sports: []string{}, SkillLevels: map[string]string{}, Availability: []users.Slot{}, Timezone: "UTC",
			Privacy: users.DefaultPrivacy, Role: auth.RoleMember, Tier: users.TierFree, CreatedAt: now, UpdatedAt: now}
		if err := store.NewUsers(db).CreateUser(context.Background(), u, nil); err != nil {
			tb.Fatal(err)
		}
		people[i] = u.ID
	}
	return people
}
