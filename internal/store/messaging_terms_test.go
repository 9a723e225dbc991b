package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/clock"
	idgen "github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/messaging"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
)

// TestMessageTermsAcrossOneTransaction: a message sent and then edited,
// and another sent and then deleted, in one transaction (on SQLite a new
// message's terms wait for the end of the work, which a batch's jobs
// share) are found by their last words only, and the deleted one not at
// all.
func TestMessageTermsAcrossOneTransaction(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		ann, bob := register(t, db, clk, "ann"), register(t, db, clk, "bob")
		conv := store.SeedConversation{ID: idgen.New(idgen.Conversation), Members: []string{ann.ID, bob.ID}}
		if err := store.SeedMessaging(ctx, db, []store.SeedConversation{conv}, 0, nil, clk.Now()); err != nil {
			t.Fatal(err)
		}
		st := store.NewMessaging(db)
		edited := &messaging.Message{ID: idgen.New(idgen.Message), ConversationID: conv.ID, SenderID: ann.ID, Body: "volley practice", CreatedAt: clk.Now(), Seq: 1}
		deleted := &messaging.Message{ID: idgen.New(idgen.Message), ConversationID: conv.ID, SenderID: ann.ID, Body: "secret smash", CreatedAt: clk.Now(), Seq: 2}
		err := st.WithConversation(ctx, conv.ID, ann.ID, func(l messaging.Locked) error {
			for _, m := range []*messaging.Message{edited, deleted} {
				if err := l.InsertMessage(ctx, m); err != nil {
					return err
				}
			}
			now := clk.Now()
			edited.Body, edited.EditedAt = "badminton practice", &now
			if err := l.UpdateMessage(ctx, edited); err != nil {
				return err
			}
			deleted.Body, deleted.DeletedAt = "", &now
			return l.UpdateMessage(ctx, deleted)
		})
		if err != nil {
			t.Fatal(err)
		}
		for word, want := range map[string]int{"badminton": 1, "practice": 1, "volley": 0, "secret": 0, "smash": 0} {
			found, err := st.Search(ctx, &messaging.SearchQuery{ViewerID: bob.ID, Terms: []string{word}, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if len(found) != want || (want == 1 && found[0].Message.ID != edited.ID) {
				t.Errorf("search %q: %d found; want %d (the edited message)", word, len(found), want)
			}
		}
	})
}

// TestSendStreamsTheNotificationFirst: a recipient's stream has a new
// message's notification before the message itself, so that a client that
// clears a conversation's badge when its new message arrives is not shown
// the badge again by the notification that follows.
func TestSendStreamsTheNotificationFirst(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		ann, bob := register(t, db, clk, "ann"), register(t, db, clk, "bob")
		conv := store.SeedConversation{ID: idgen.New(idgen.Conversation), Members: []string{ann.ID, bob.ID}}
		if err := store.SeedMessaging(ctx, db, []store.SeedConversation{conv}, 0, nil, clk.Now()); err != nil {
			t.Fatal(err)
		}
		svc := messaging.NewService(store.NewMessaging(db), clk)
		for _, body := range []string{"first", "second"} {
			if _, err := svc.Send(ctx, conv.ID, ann.ID, body, ""); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := db.QueryContext(ctx, `SELECT kind FROM stream_events WHERE user_id = $1 ORDER BY seq`, bob.ID)
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				t.Fatal(err)
			}
			kinds = append(kinds, k)
		}
		rows.Close()
		if len(kinds) != 4 || kinds[1] != messaging.StreamSent || kinds[3] != messaging.StreamSent || kinds[0] == messaging.StreamSent || kinds[2] == messaging.StreamSent {
			t.Fatalf("bob's stream: %v; want a notification, then the message, twice", kinds)
		}
	})
}
