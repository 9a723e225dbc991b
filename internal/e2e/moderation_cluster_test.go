package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/httpapi"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// TestModerationAcrossNodes: a suspension decided on one node holds for the
// very next request on another, and is gone there as soon as it is lifted;
// two nodes computing behaviour signals together open one case per user.
func TestModerationAcrossNodes(t *testing.T) {
	c := apptest.StartCluster(t, 2, "MATCHPOINT_MODERATION_SIGNAL_INTERVAL=100ms")
	ctx := context.Background()
	mk := func(name string, role string) (*users.User, string) {
		u, err := c.App.Users.Register(ctx, users.Registration{Email: name + "@example.com", Username: name, Password: apptest.Password})
		if err != nil {
			t.Fatal(err)
		}
		scopes := []string{"read", "write"}
		if role == auth.RoleOperator {
			if _, err := c.App.Users.SetRole(ctx, u.ID, role); err != nil {
				t.Fatal(err)
			}
			if _, err := c.App.Users.SetTier(ctx, u.ID, users.TierEnterprise, nil); err != nil {
				t.Fatal(err)
			}
			scopes = append(scopes, "admin")
		}
		_, k, err := c.App.Keys.Create(ctx, apikeys.Spec{UserID: u.ID, Name: "test", Scopes: scopes})
		if err != nil {
			t.Fatal(err)
		}
		return u, k
	}
	_, op := mk("moderator", auth.RoleOperator)
	_, kr := mk("reporter", auth.RoleMember)
	bad, kb := mk("spammer", auth.RoleMember)
	a, b := c.Nodes[0].URL, c.Nodes[1].URL

	decode[httpapi.ReportOut](t, nodeAPI(t, a, "POST", "/v1/reports", kr, `{"target_type":"user","target_id":"`+bad.ID+`","reason":"spam"}`), 201)
	list := decode[httpapi.List[httpapi.ModerationCase]](t, nodeAPI(t, b, "GET", "/v1/moderation/cases?status=open", op, ""), 200)
	if len(list.Data) != 1 {
		t.Fatalf("queue: %+v", list)
	}
	decode[httpapi.Profile](t, nodeAPI(t, b, "GET", "/v1/users/me", kb, ""), 200)
	decode[httpapi.ModerationDecision](t, nodeAPI(t, a, "POST", "/v1/moderation/cases/"+list.Data[0].ID+"/decision", op,
		`{"action":"suspend_user","reason":"advertising"}`), 200)
	if r := nodeAPI(t, b, "GET", "/v1/users/me", kb, ""); r.Status != 403 || r.JSON(t)["code"] != "account_suspended" {
		t.Fatalf("on the other node right after: %d %s", r.Status, r.Body)
	}
	if _, err := c.App.Moderation.Unsuspend(ctx, bad.ID, "cleared"); err != nil {
		t.Fatal(err)
	}
	decode[httpapi.Profile](t, nodeAPI(t, b, "GET", "/v1/users/me", kb, ""), 200)

	// Five people block one user; both nodes' signal workers see it.
	target, _ := mk("blocked", auth.RoleMember)
	for i := range 5 {
		u, _ := mk(fmt.Sprintf("blocker%d", i), auth.RoleMember)
		if _, err := c.App.Matching.Block(ctx, u.ID, target.ID); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var n int
		if err := c.App.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM moderation_cases WHERE target_id = $1`, target.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			time.Sleep(500 * time.Millisecond) // several more passes of both nodes
			if err := c.App.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM moderation_cases WHERE target_id = $1`, target.ID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Fatalf("%d cases for one user", n)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no signal case after 20 s (%d)", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
