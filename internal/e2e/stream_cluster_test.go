package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/httpapi"
	"github.com/matchpoint-api/matchpoint/internal/stream"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// TestStreamOnTwoNodes: two service processes over one PostgreSQL. A client
// connected to node A receives, in order, the notifications that requests
// made through node B cause; after a reconnect to node B with its
// Last-Event-ID it gets exactly what it missed, then live events again.
func TestStreamOnTwoNodes(t *testing.T) {
	c := apptest.StartCluster(t, 2)
	ctx := context.Background()
	nodeA, nodeB := c.Nodes[0], c.Nodes[1]
	player := func(name string) *users.User {
		u, err := c.App.Users.Register(ctx, users.Registration{Email: name + "@example.com", Username: name, Password: apptest.Password, FirstName: name})
		if err != nil {
			t.Fatal(err)
		}
		sports := []string{"tennis"}
		if u, err = c.App.Users.Update(ctx, u.ID, users.Patch{Sports: &sports}); err != nil {
			t.Fatal(err)
		}
		return u
	}
	ann := player("ann")
	annKey := keyOf(t, c.App, ann.ID, "read")
	const each = 6
	var askers []string
	for i := range 3 * each {
		askers = append(askers, keyOf(t, c.App, player(fmt.Sprintf("asker%d", i)).ID, "matching"))
	}
	// ask has asker i send ann a match request through node B and returns
	// the match's id.
	ask := func(i int) string {
		r := nodeAPI(t, nodeB.URL, http.MethodPost, "/v1/matches", askers[i], fmt.Sprintf(`{"user_id":%q}`, ann.ID))
		m := decode[httpapi.Match](t, r, http.StatusCreated)
		return m.ID
	}
	matchesOf := func(ms []stream.Message) []string {
		var out []string
		for _, m := range ms {
			n := notificationOfEvent(t, m)
			if n["kind"] != "match.requested" {
				t.Fatalf("event %s is a %v notification", m.ID, n["kind"])
			}
			out = append(out, n["data"].(map[string]any)["match_id"].(string))
		}
		return out
	}

	onA := openSSE(t, nodeA.URL, "/v1/stream", annKey)
	var sent []string
	for i := range each {
		sent = append(sent, ask(i))
	}
	got := onA.events(t, each, 30*time.Second)
	if !slices.Equal(matchesOf(got), sent) {
		t.Fatalf("node A received %v, want in order %v", matchesOf(got), sent)
	}
	onA.close()

	// Away: more requests through node B.
	var missed []string
	for i := each; i < 2*each; i++ {
		missed = append(missed, ask(i))
	}
	onB := openSSE(t, nodeB.URL, "/v1/stream", annKey, "Last-Event-ID", got[len(got)-1].ID)
	replayed := onB.events(t, each, 30*time.Second)
	if !slices.Equal(matchesOf(replayed), missed) {
		t.Fatalf("after reconnecting to node B: %v, want exactly %v", matchesOf(replayed), missed)
	}
	// And live again, on node B, for requests through either node.
	var live []string
	for i := 2 * each; i < 3*each; i++ {
		if i%2 == 0 {
			live = append(live, ask(i))
			continue
		}
		r := nodeAPI(t, nodeA.URL, http.MethodPost, "/v1/matches", askers[i], fmt.Sprintf(`{"user_id":%q}`, ann.ID))
		live = append(live, decode[httpapi.Match](t, r, http.StatusCreated).ID)
	}
	if got := matchesOf(onB.events(t, each, 30*time.Second)); !slices.Equal(got, live) {
		t.Fatalf("live on node B: %v, want %v", got, live)
	}
	onB.quiet(t, 500*time.Millisecond)
}
