package e2e

import (
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/httpapi"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// TestTwoNodes: two service processes over one PostgreSQL see each other's
// writes at once (no node keeps state of its own).
func TestTwoNodes(t *testing.T) {
	c := apptest.StartCluster(t, 2)
	u, err := c.App.Users.Register(t.Context(), users.Registration{Email: "nodes@example.com", Username: "nodes", Password: apptest.Password})
	if err != nil {
		t.Fatal(err)
	}
	k := keyOf(t, c.App, u.ID, "read", "write")
	r := nodeAPI(t, c.Nodes[0].URL, "PATCH", "/v1/users/me", k, `{"bio":"from node 0"}`)
	if r.Status != 200 {
		t.Fatalf("patch on node 0: %d %s", r.Status, r.Body)
	}
	if me := decode[httpapi.Profile](t, nodeAPI(t, c.Nodes[1].URL, "GET", "/v1/users/me", k, ""), 200); me.Bio != "from node 0" {
		t.Fatalf("read on node 1: %+v", me)
	}
}
