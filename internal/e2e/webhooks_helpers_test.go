package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
	"github.com/matchpoint-api/matchpoint/pkg/webhook"
)

// eachWebhookServer runs fn per engine with a service that trusts ca and
// may deliver to loopback, its delivery worker running.
func eachWebhookServer(t *testing.T, schedule string, fn func(t *testing.T, s *apptest.Server, rcv *apptest.Receiver)) {
	for _, d := range testdb.Engines() {
		t.Run(string(d), func(t *testing.T) {
			ca := apptest.NewCA(t)
			rcv := apptest.NewReceiver(t, ca)
			s := apptest.StartWith(t, d, apptest.WebhookConfig(ca, schedule))
			s.RunWebhooks(t)
			fn(t, s, rcv)
		})
	}
}

// enterprise makes an Enterprise account and an admin API key for it.
func enterprise(t *testing.T, s *apptest.Server, name string) (*users.User, string) {
	t.Helper()
	u := s.User(t, name)
	if _, err := s.App.Users.SetTier(context.Background(), u.ID, "enterprise", nil); err != nil {
		t.Fatal(err)
	}
	return u, keyOf(t, s.App, u.ID, "read", "write", "admin")
}

type hook struct {
	ID, Secret, Status string
}

// subscribe creates a subscription and, for https ones, waits until the
// receiver answered its challenge.
func subscribe(t *testing.T, s *apptest.Server, token, body string) hook {
	t.Helper()
	r := api(t, s, "POST", "/api/v1/webhooks", token, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("create webhook: %d %s", r.Status, r.Body)
	}
	if r.Header.Get("Matchpoint-Maturity") != "beta" {
		t.Errorf("Matchpoint-Maturity = %q", r.Header.Get("Matchpoint-Maturity"))
	}
	m := r.JSON(t)
	h := hook{ID: str(m, "id"), Secret: str(m, "secret"), Status: str(m, "status")}
	if str(m, "transport") == "stream" {
		return h
	}
	if h.Status != "pending_verification" || !strings.HasPrefix(h.Secret, "whsec_") {
		t.Fatalf("new webhook: %s", r.Body)
	}
	s.Clock.Advance(2 * time.Second) // the challenge goes out a second after creation
	apptest.WaitFor(t, "verification", func() bool {
		return str(api(t, s, "GET", "/api/v1/webhooks/"+h.ID, token, "").JSON(t), "status") == "active"
	})
	h.Status = "active"
	return h
}

// envelope is a delivered body.
type envelope struct {
	ID      string                     `json:"id"`
	Type    string                     `json:"type"`
	Created string                     `json:"created"`
	Data    map[string]json.RawMessage `json:"data"`
}

func parseEnvelope(t *testing.T, b []byte) envelope {
	t.Helper()
	var e envelope
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("delivery body is not an envelope: %v\n%s", err, b)
	}
	return e
}

// verifySignature checks a delivery with the Go helper.
func verifySignature(t *testing.T, secret string, rec apptest.Received) {
	t.Helper()
	wh, err := webhook.New(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(rec.Body, rec.Header); err != nil {
		t.Errorf("signature of %s: %v", rec.Header.Get("webhook-id"), err)
	}
}

// standardWebhooksDir installs the official JavaScript library once into a
// cache directory (never the repository) and returns its node_modules, or ""
// when node and npm are not here.
func standardWebhooksDir(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		return ""
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return ""
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "matchpoint-tests", "standardwebhooks-1.1.1")
	mod := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(mod, "standardwebhooks", "package.json")); err == nil {
		return mod
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--no-save", "--prefix", dir, "standardwebhooks@1.1.1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("npm install standardwebhooks failed, checking with Go only: %v\n%s", err, out)
		return ""
	}
	return mod
}

// verifyWithNode checks deliveries with the official library, run by node.
func verifyWithNode(t *testing.T, secret string, recs []apptest.Received) {
	t.Helper()
	mod := standardWebhooksDir(t)
	if mod == "" {
		t.Log("node or npm not found: signatures checked with the Go helper only")
		return
	}
	type msg struct {
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	}
	var msgs []msg
	for _, r := range recs {
		msgs = append(msgs, msg{Headers: map[string]string{"webhook-id": r.Header.Get("webhook-id"),
			"webhook-timestamp": r.Header.Get("webhook-timestamp"), "webhook-signature": r.Header.Get("webhook-signature")}, Body: string(r.Body)})
	}
	in, _ := json.Marshal(msgs)
	script := `const { Webhook } = require('standardwebhooks');
const msgs = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const wh = new Webhook(process.env.SECRET);
for (const m of msgs) { const p = wh.verify(m.body, m.headers); if (!p.id) throw new Error('no id'); }
console.log('verified ' + msgs.length);`
	cmd := exec.Command("node", "-e", script)
	cmd.Env = append(os.Environ(), "NODE_PATH="+mod, "SECRET="+secret)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("standardwebhooks (node) refused the deliveries: %v\n%s", err, out)
	}
	t.Logf("standardwebhooks (node): %s", strings.TrimSpace(string(out)))
}
