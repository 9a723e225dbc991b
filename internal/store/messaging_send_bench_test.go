package store_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clock"
	idgen "github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/messaging"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
)

// BenchmarkMessagesSend measures the store's share of a message send, as
// matchpoint bench messaging sends them: eight senders side by side, each
// in a conversation of three of its own. msgs/s is the rate; cpu-ms/msg
// the process's CPU per message.
//
//	go test ./internal/store -run '^$' -bench MessagesSend -benchtime 5s
func BenchmarkMessagesSend(b *testing.B) {
	for _, d := range testdb.Engines() {
		b.Run(string(d), func(b *testing.B) {
			ctx := context.Background()
			db := testdb.Open(b, testdb.NewURL(b, d))
			now := time.Now().UTC()
			const senders = 8
			people := seedPeople(b, db, "sender", senders+2, now)
			convs := make([]store.SeedConversation, senders)
			for i := range convs {
				convs[i] = store.SeedConversation{ID: idgen.New(idgen.Conversation), Members: []string{people[i], people[i+1], people[i+2]}}
			}
			if err := store.SeedMessaging(ctx, db, convs, 0, nil, now); err != nil {
				b.Fatal(err)
			}
			svc := messaging.NewService(store.NewMessaging(db), clock.Real{})
			var next atomic.Int64
			b.SetParallelism((senders + 1) / 2) // GOMAXPROCS 2: eight goroutines
			cpu0, t0 := processCPU(), time.Now()
			b.RunParallel(func(pb *testing.PB) {
				w := int(next.Add(1)-1) % senders
				for pb.Next() {
					if _, err := svc.Send(ctx, convs[w].ID, convs[w].Members[0], "Court 3 at ten? Bring the new balls", ""); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "msgs/s")
			b.ReportMetric(float64(processCPU()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/msg")
		})
	}
}
