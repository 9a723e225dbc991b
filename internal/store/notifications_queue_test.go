package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clock"
	idgen "github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/notifications"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
)

var hooks sync.Once

// published records what the publisher hook saw, by notification id.
var published sync.Map

func registerHooks() {
	hooks.Do(func() {
		// A conversation muted by its member, as the messaging store will
		// check it; only this test's conversation ids are affected.
		store.RegisterMuteCheck(func(ctx context.Context, tx *sql.Tx, n *notify.Notification) (bool, error) {
			return n.Data["conversation_id"] == "cnv_muted_in_queue_test", nil
		})
		store.RegisterNotificationPublisher(func(ctx context.Context, tx *sql.Tx, ns []*notify.Notification) error {
			for _, n := range ns {
				published.Store(n.ID, n.Count)
			}
			return nil
		})
	})
}

func device(t *testing.T, st *store.Notifications, userID, name string, now time.Time) *notifications.Device {
	t.Helper()
	d, err := st.RegisterDevice(context.Background(), &notifications.Device{ID: idgen.New(idgen.Device), UserID: userID, Platform: "webpush",
		Token: "https://push.example.net/" + name, P256DH: "k", Auth: "a", CreatedAt: now}, 20)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func send(*notifications.Job) notifications.Plan {
	return notifications.Plan{Action: notifications.Send}
}

// TestNotificationQueue: jobs are queued with the notification, a mute
// silences them, two owners claiming at once never get the same job, a
// lease that expires is claimed again, a lost lease records nothing, and
// released leases are claimable at once.
func TestNotificationQueue(t *testing.T) {
	registerHooks()
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		st := store.NewNotifications(db)
		u := register(t, db, clk, "quinn")
		device(t, st, u.ID, "a", clk.Now())
		device(t, st, u.ID, "b", clk.Now())

		muted := notify.New(clk.Now(), u.ID, notify.KindMessage, "Ann sent you a message", "x", map[string]string{"conversation_id": "cnv_muted_in_queue_test"})
		if err := st.AddNotifications(ctx, []*notify.Notification{muted}); err != nil {
			t.Fatal(err)
		}
		if n, _ := st.PendingJobs(ctx, ""); n != 0 {
			t.Fatalf("a muted conversation queued %d jobs", n)
		}
		if _, err := st.Get(ctx, u.ID, muted.ID); err != nil {
			t.Errorf("a muted notification is not in the centre: %v", err)
		}
		if c, ok := published.Load(muted.ID); !ok || c != 1 {
			t.Errorf("publisher saw %v", c)
		}

		var ns []*notify.Notification
		for i := range 50 {
			ns = append(ns, notify.New(clk.Now(), u.ID, notify.KindMatchRequested, fmt.Sprint("Request ", i), "", nil))
		}
		if err := st.AddNotifications(ctx, ns); err != nil {
			t.Fatal(err)
		}
		if n, _ := st.PendingJobs(ctx, "push"); n != 100 {
			t.Fatalf("%d push jobs, want 2 devices x 50", n)
		}

		// Four owners claim at once: every job goes to exactly one.
		var mu sync.Mutex
		claimed := map[int64]string{}
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				owner := fmt.Sprint("owner-", w)
				for {
					jobs, err := st.ClaimJobs(ctx, owner, clk.Now(), time.Minute, 7, send)
					if err != nil {
						t.Error(err)
						return
					}
					if len(jobs) == 0 {
						return
					}
					mu.Lock()
					for _, j := range jobs {
						if prev, dup := claimed[j.Seq]; dup {
							t.Errorf("job %d claimed by %s and %s", j.Seq, prev, owner)
						}
						claimed[j.Seq] = owner
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(claimed) != 100 {
			t.Fatalf("%d jobs claimed, want 100", len(claimed))
		}
		if jobs, _ := st.ClaimJobs(ctx, "late", clk.Now(), time.Minute, 100, send); len(jobs) != 0 {
			t.Fatalf("leased jobs claimed again: %d", len(jobs))
		}

		// owner-0 stops: its leases are handed back and claimable at once.
		var mine []int64
		for seq, o := range claimed {
			if o == "owner-0" {
				mine = append(mine, seq)
			}
		}
		if err := st.ReleaseJobs(ctx, "owner-0"); err != nil {
			t.Fatal(err)
		}
		again, _ := st.ClaimJobs(ctx, "heir", clk.Now(), time.Minute, 100, send)
		var got []int64
		for _, j := range again {
			got = append(got, j.Seq)
			if j.FirstSend {
				t.Errorf("job %d handed out before still reads as never sent", j.Seq)
			}
		}
		slices.Sort(got)
		slices.Sort(mine)
		if !slices.Equal(got, mine) {
			t.Fatalf("released %v, reclaimed %v", mine, got)
		}

		// owner-1's lease expires (its node died) and another takes it over:
		// owner-1's late outcome then records nothing.
		clk.Advance(2 * time.Minute)
		taken, _ := st.ClaimJobs(ctx, "rescuer", clk.Now(), time.Minute, 100, send)
		if len(taken) != 100 {
			t.Fatalf("%d expired leases reclaimed, want 100", len(taken))
		}
		var seq1 int64
		for seq, o := range claimed {
			if o == "owner-1" {
				seq1 = seq
				break
			}
		}
		ev, _ := outbox.New(clk.Now(), outbox.NotificationDelivered, u.ID, "notification", map[string]string{"id": "x"})
		if err := st.FinishJobs(ctx, "owner-1", []notifications.Outcome{{Seq: seq1, Action: notifications.Done, Event: &ev}}); err != nil {
			t.Fatal(err)
		}
		evs, _ := store.NewOutbox(db).Recorded(ctx, 0, 1000)
		for _, e := range evs {
			if e.ID == ev.ID {
				t.Error("a lost lease recorded its event")
			}
		}
		if n, _ := st.PendingJobs(ctx, ""); n != 100 {
			t.Errorf("a lost lease finished its job: %d left", n)
		}
		// The holder finishes: retry one, finish the rest.
		var outs []notifications.Outcome
		for i, j := range taken {
			o := notifications.Outcome{Seq: j.Seq, Action: notifications.Done, At: clk.Now()}
			if i == 0 {
				o = notifications.Outcome{Seq: j.Seq, Action: notifications.Retry, Until: clk.Now().Add(time.Hour), Error: "503"}
			}
			outs = append(outs, o)
		}
		if err := st.FinishJobs(ctx, "rescuer", outs); err != nil {
			t.Fatal(err)
		}
		if n, _ := st.PendingJobs(ctx, ""); n != 1 {
			t.Fatalf("%d jobs left, want the retried one", n)
		}
		if jobs, _ := st.ClaimJobs(ctx, "x", clk.Now().Add(59*time.Minute), time.Minute, 10, send); len(jobs) != 0 {
			t.Error("a retry was claimed before its time")
		}
		if jobs, _ := st.ClaimJobs(ctx, "x", clk.Now().Add(61*time.Minute), time.Minute, 10, send); len(jobs) != 1 || jobs[0].Attempts != 1 {
			t.Errorf("retry: %+v", jobs)
		}
	})
}
