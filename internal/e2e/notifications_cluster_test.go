package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/notifications"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// TestNotificationsOnTwoNodes: two service processes over one PostgreSQL
// drain the push queue together, each push going out once; stopped with
// SIGTERM in the middle, they finish what they hold and leave nothing
// leased, and a node started afterwards sends the rest.
func TestNotificationsOnTwoNodes(t *testing.T) {
	ps := newPushService(t, time.Now)
	ca := apptest.CAFile(t, httptestCert(t))
	env := []string{"MATCHPOINT_WEBHOOK_ALLOW_PRIVATE=true", "MATCHPOINT_WEBHOOK_CA_FILE=" + ca}
	c := apptest.StartCluster(t, 2, env...)
	ctx := context.Background()
	ps.vapid = c.App.Notifications.VAPIDPublicKey()

	const people, each = 20, 15
	var members []string
	for i := range people {
		u, err := c.App.Users.Register(ctx, users.Registration{Email: fmt.Sprintf("p%d@example.com", i), Username: fmt.Sprintf("person%d", i), Password: apptest.Password})
		if err != nil {
			t.Fatal(err)
		}
		b := ps.subscribe(fmt.Sprint("p", i))
		// Straight into the store: the test process's service does not
		// allow loopback endpoints, the nodes do.
		d := &notifications.Device{ID: ids.New(ids.Device), UserID: u.ID, Platform: "webpush", Token: ps.srv.URL + b.path, CreatedAt: time.Now()}
		d.P256DH, d.Auth = encodeKeys(b)
		if _, err := c.App.NotificationStore.RegisterDevice(ctx, d, 20); err != nil {
			t.Fatal(err)
		}
		members = append(members, u.ID)
	}
	write := func(round int) {
		var ns []*notify.Notification
		for i, uid := range members {
			for k := range each {
				ns = append(ns, notify.New(time.Now(), uid, notify.KindEventReminder, fmt.Sprintf("Reminder %d/%d/%d", round, i, k), "", nil))
			}
		}
		if err := c.App.NotificationStore.AddNotifications(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	wait := func(n int) {
		deadline := time.Now().Add(90 * time.Second)
		for len(ps.messages()) < n && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
	}
	once := func(n int) {
		t.Helper()
		seen := map[any]int{}
		for _, m := range ps.messages() {
			seen[m.Payload["id"]]++
		}
		for id, k := range seen {
			if k != 1 {
				t.Errorf("notification %v pushed %d times", id, k)
			}
		}
		if len(seen) != n {
			t.Fatalf("%d notifications pushed, want %d", len(seen), n)
		}
	}

	write(1)
	wait(people * each)
	once(people * each)

	// A second burst to a slow push service; both nodes stop with SIGTERM
	// while it drains.
	ps.mu.Lock()
	ps.delay = 200 * time.Millisecond
	ps.mu.Unlock()
	write(2)
	for len(ps.messages()) < people*each+20 {
		time.Sleep(5 * time.Millisecond)
	}
	c.Nodes[0].Stop(t)
	c.Nodes[1].Stop(t)
	var leased int
	if err := c.App.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM notification_jobs WHERE lease_owner <> ''`).Scan(&leased); err != nil {
		t.Fatal(err)
	}
	if leased != 0 {
		t.Errorf("%d jobs still leased after both nodes stopped", leased)
	}
	t.Logf("%d of %d pushed before both nodes stopped", len(ps.messages())-people*each, people*each)
	ps.mu.Lock()
	ps.delay = 0
	ps.mu.Unlock()
	apptest.StartNode(t, c.DBURL, env...)
	wait(2 * people * each)
	once(2 * people * each)
}
