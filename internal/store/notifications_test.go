package store_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/notifications"
	"github.com/matchpoint-api/matchpoint/internal/notifications/push"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

func register(t *testing.T, db *store.DB, clk clock.Clock, name string) *users.User {
	t.Helper()
	u, err := users.NewService(store.NewUsers(db), clk).Register(context.Background(), users.Registration{
		Email: name + "@example.com", Username: name, Password: "correct horse battery"})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestNotificationsCollapse(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		u := register(t, db, clk, "nina")
		add := func(n *notify.Notification) {
			t.Helper()
			if err := db.Tx(ctx, func(tx *sql.Tx) error { return store.AddNotification(ctx, tx, n) }); err != nil {
				t.Fatal(err)
			}
		}
		first := notify.New(clk.Now(), u.ID, notify.KindMessage, "Ann sent you a message", "hi", map[string]string{"conversation_id": "cnv_1"})
		first.CollapseKey = "conversation:cnv_1"
		add(first)
		second := notify.New(clk.Now(), u.ID, notify.KindMessage, "Ann sent you 2 messages", "still there?", nil)
		second.CollapseKey = "conversation:cnv_1"
		add(second)
		if second.ID != first.ID || second.Count != 2 {
			t.Fatalf("unread notification not collapsed: %s count %d (first %s)", second.ID, second.Count, first.ID)
		}
		other := notify.New(clk.Now(), u.ID, notify.KindMatchRequested, "Bob wants to play", "", nil)
		add(other)
		if _, err := db.ExecContext(ctx, `UPDATE notifications SET read_at = 1 WHERE id = $1`, first.ID); err != nil {
			t.Fatal(err)
		}
		third := notify.New(clk.Now(), u.ID, notify.KindMessage, "Ann sent you a message", "again", nil)
		third.CollapseKey = "conversation:cnv_1"
		add(third)
		if third.ID == first.ID || third.Count != 1 {
			t.Fatal("a read notification absorbed a new one")
		}
		var n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM notifications WHERE user_id = $1`, u.ID).Scan(&n); err != nil || n != 3 {
			t.Fatalf("%d notifications, %v; want 3", n, err)
		}
	})
}

func TestBlocks(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		a, b, c := register(t, db, clk, "anna"), register(t, db, clk, "bert"), register(t, db, clk, "carl")
		if _, err := db.ExecContext(ctx, `INSERT INTO user_blocks (blocker_id, blocked_id, created_at) VALUES ($1, $2, 1)`, a.ID, b.ID); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			x, y string
			want bool
		}{{a.ID, b.ID, true}, {b.ID, a.ID, true}, {a.ID, c.ID, false}, {c.ID, b.ID, false}} {
			got, err := store.BlockedEitherWay(ctx, db, tc.x, tc.y)
			if err != nil || got != tc.want {
				t.Errorf("blocked(%s, %s) = %v, %v; want %v", tc.x, tc.y, got, err, tc.want)
			}
			var visible bool
			if err := db.QueryRowContext(ctx, `SELECT `+store.NotBlocked("$1", "$2"), tc.x, tc.y).Scan(&visible); err != nil || visible == tc.want {
				t.Errorf("notBlocked(%s, %s) = %v, %v", tc.x, tc.y, visible, err)
			}
		}
	})
}

// TestNotificationsForMany: notifications written together (a group
// message) each follow their recipient: a push job for the one with a
// device, none for the others, nothing for an erased or unknown account.
func TestNotificationsForMany(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		withDevice, without, gone := register(t, db, clk, "dora"), register(t, db, clk, "walt"), register(t, db, clk, "gina")
		st := store.NewNotifications(db)
		if _, err := st.RegisterDevice(ctx, &notifications.Device{ID: "dev_1", UserID: withDevice.ID, Platform: push.FCM, Token: "fcm-token",
			Name: "phone", CreatedAt: clk.Now()}, 10); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `UPDATE users SET deleted_at = 1 WHERE id = $1`, gone.ID); err != nil {
			t.Fatal(err)
		}
		var ns []*notify.Notification
		for _, id := range []string{withDevice.ID, without.ID, gone.ID, "usr_nobody"} {
			n := notify.New(clk.Now(), id, notify.KindMessage, "Ann in Club", "hi", map[string]string{"conversation_id": "cnv_1"})
			n.CollapseKey = "conversation:cnv_1"
			ns = append(ns, n)
		}
		if err := st.AddNotifications(ctx, ns); err != nil {
			t.Fatal(err)
		}
		count := func(q string, args ...any) int {
			t.Helper()
			var n int
			if err := db.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		for _, c := range []struct {
			user        string
			notes, push int
		}{{withDevice.ID, 1, 1}, {without.ID, 1, 0}, {gone.ID, 0, 0}, {"usr_nobody", 0, 0}} {
			if got := count(`SELECT COUNT(*) FROM notifications WHERE user_id = $1`, c.user); got != c.notes {
				t.Errorf("%s: %d notifications, want %d", c.user, got, c.notes)
			}
			if got := count(`SELECT COUNT(*) FROM notification_jobs WHERE user_id = $1 AND channel = 'push'`, c.user); got != c.push {
				t.Errorf("%s: %d push jobs, want %d", c.user, got, c.push)
			}
		}

		// A second batch folds into the unread records, twice for one
		// recipient (two with one key in one batch), and adds one with no
		// key; each notification comes back as the record it went into,
		// and each change reaches its owner's stream.
		clk.Advance(time.Minute)
		var more []*notify.Notification
		for _, c := range []struct{ user, key string }{{withDevice.ID, "conversation:cnv_1"}, {without.ID, "conversation:cnv_1"},
			{withDevice.ID, "conversation:cnv_1"}, {without.ID, ""}} {
			n := notify.New(clk.Now(), c.user, notify.KindMessage, "Ann in Club", "again", map[string]string{"conversation_id": "cnv_1"})
			n.CollapseKey = c.key
			more = append(more, n)
		}
		if err := st.AddNotifications(ctx, more); err != nil {
			t.Fatal(err)
		}
		for i, want := range []struct {
			id    string
			count int
		}{{ns[0].ID, 2}, {ns[1].ID, 2}, {ns[0].ID, 3}, {more[3].ID, 1}} {
			if more[i].ID != want.id || more[i].Count != want.count {
				t.Errorf("notification %d: %s count %d, want %s count %d", i, more[i].ID, more[i].Count, want.id, want.count)
			}
		}
		for _, c := range []struct {
			user                 string
			notes, count, stream int
		}{{withDevice.ID, 1, 3, 3}, {without.ID, 2, 3, 3}} {
			if got := count(`SELECT COUNT(*) FROM notifications WHERE user_id = $1`, c.user); got != c.notes {
				t.Errorf("%s: %d notifications, want %d", c.user, got, c.notes)
			}
			if got := count(`SELECT COALESCE(SUM(count), 0) FROM notifications WHERE user_id = $1`, c.user); got != c.count {
				t.Errorf("%s: counts add up to %d, want %d", c.user, got, c.count)
			}
			if got := count(`SELECT COUNT(*) FROM stream_events WHERE user_id = $1 AND kind = 'notification'`, c.user); got != c.stream {
				t.Errorf("%s: %d notification stream events, want %d", c.user, got, c.stream)
			}
		}

		// With the centre off for messages, a record is kept only for a push
		// that can go: none without a device, a quiet one (read, not in the
		// centre) with its push job once there is one.
		quiet := register(t, db, clk, "ivy")
		off := false
		if _, err := st.UpdateSettings(ctx, quiet.ID, clk.Now(), func(s *notifications.Settings) error {
			s.Overrides = map[string]notifications.Override{notify.KindMessage: {InApp: &off}}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		tell := func() {
			t.Helper()
			n := notify.New(clk.Now(), quiet.ID, notify.KindMessage, "Ann in Club", "psst", map[string]string{"conversation_id": "cnv_1"})
			n.CollapseKey = "conversation:cnv_1"
			if err := st.AddNotifications(ctx, []*notify.Notification{n}); err != nil {
				t.Fatal(err)
			}
		}
		tell()
		if got := count(`SELECT COUNT(*) FROM notifications WHERE user_id = $1`, quiet.ID); got != 0 {
			t.Errorf("in-app off, no device: %d records, want none", got)
		}
		if _, err := st.RegisterDevice(ctx, &notifications.Device{ID: "dev_2", UserID: quiet.ID, Platform: push.FCM, Token: "fcm-token-2",
			Name: "phone", CreatedAt: clk.Now()}, 10); err != nil {
			t.Fatal(err)
		}
		tell()
		if got := count(`SELECT COUNT(*) FROM notifications WHERE user_id = $1 AND in_app = $2 AND read_at IS NOT NULL`, quiet.ID, false); got != 1 {
			t.Errorf("in-app off, a device: %d quiet records, want 1", got)
		}
		if got := count(`SELECT COUNT(*) FROM notification_jobs WHERE user_id = $1 AND channel = 'push'`, quiet.ID); got != 1 {
			t.Errorf("in-app off, a device: %d push jobs, want 1", got)
		}
	})
}
