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
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// TestMessageTermsAcrossOneTransaction: a message sent and then edited,
// and another sent and then deleted, in one transaction (on SQLite a new
// message's terms wait for the end of the work, which a batch's jobs
// share) are found by their last words only, and the deleted one not at
// all.
func TestMessageTermsAcrossOneTransaction(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		clk, ann, bob, conv := twoInConversation(t, db)
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

// twoInConversation registers ann and bob, in a conversation of their own,
// on a fake clock.
func twoInConversation(t *testing.T, db *store.DB) (*clock.Fake, *users.User, *users.User, store.SeedConversation) {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	ann, bob := register(t, db, clk, "ann"), register(t, db, clk, "bob")
	conv := store.SeedConversation{ID: idgen.New(idgen.Conversation), Members: []string{ann.ID, bob.ID}}
	if err := store.SeedMessaging(context.Background(), db, []store.SeedConversation{conv}, 0, nil, clk.Now()); err != nil {
		t.Fatal(err)
	}
	return clk, ann, bob, conv
}
