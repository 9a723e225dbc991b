// Package contract runs a client library's own test script against a real
// service: clients/<lang>/test.sh, with the environment of DECISIONS.md
// ("Client libraries against a given server"). Each library has a test
// package of its own under clients/contract/<lang>, so that each is a test
// binary of its own: go test runs them side by side, each within its own
// time limit.
package contract

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
)

// toolchains are the commands a language's script needs; a library whose
// toolchain is missing is skipped, and says which. A script may also exit
// with skipStatus after printing what it lacks.
var toolchains = map[string][]string{
	"go":     {"go"},
	"python": {"python3"},
	"js":     {"node", "npm"},
	"kotlin": {"java"}, // its script installs kotlinc and JUnit 5 from Debian when missing
	"swift":  {"node", "npm", "python3"},
}

// skipStatus is the exit status of a test.sh that cannot run here (the
// convention of automake's test harness).
const skipStatus = 77

// Run runs clients/<lang>/test.sh against its own fresh service, so that
// one library's scenario cannot trip over another's matches and events: on
// SQLite, and on PostgreSQL when MATCHPOINT_TEST_POSTGRES_URL is set. It
// skips when the language's toolchain is missing, and says which.
func Run(t *testing.T, lang string) {
	if testing.Short() {
		t.Skip("builds and runs a client library's tests")
	}
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(filepath.Dir(file)), lang, "test.sh")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("no test script for %s: %v", lang, err)
	}
	for _, tool := range toolchains[lang] {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s's toolchain is missing here: no %s on PATH", lang, tool)
		}
	}
	// On each engine in turn: the libraries' scenarios cross every layer
	// down to the database.
	for _, d := range testdb.Engines() {
		t.Run(string(d), func(t *testing.T) {
			runScript(t, script, startServer(t, d))
		})
	}
}

// startServer runs the service with a CA it trusts for webhook endpoints
// on loopback addresses, and makes the credentials the scripts expect: an
// Enterprise account's API key with every scope, a confidential
// first-party OAuth client, and a member who signs in on the login page.
func startServer(t *testing.T, d store.Dialect) []string {
	t.Helper()
	ca := apptest.NewCA(t)
	// The real clock: the libraries check token expiry and webhook
	// timestamps against their own.
	s := apptest.StartWith(t, d, apptest.Options{Configure: func(c *config.Config, o *app.Options) {
		c.WebhookAllowPrivate, c.WebhookCAFile, c.WebhookRetrySchedule = true, ca.File, "1s,2s,4s"
		o.Clock = clock.Real{}
	}})
	s.RunWebhooks(t)
	ctx := context.Background()
	owner := s.User(t, "libowner")
	if _, err := s.App.Users.SetTier(ctx, owner.ID, "enterprise", nil); err != nil {
		t.Fatal(err)
	}
	key := s.Key(t, owner, "read", "write", "profile", "matching", "events", "admin")
	const redirect = "http://127.0.0.1:9/callback"
	c, secret := s.Client(t, oauth.ClientSpec{Name: "Client library tests", RedirectURIs: []string{redirect}})
	member := s.User(t, "libmember")
	return []string{
		"MATCHPOINT_BASE_URL=" + s.URL,
		"MATCHPOINT_API_KEY=" + key,
		"MATCHPOINT_CLIENT_ID=" + c.ID,
		"MATCHPOINT_CLIENT_SECRET=" + secret,
		"MATCHPOINT_REDIRECT_URI=" + redirect,
		"MATCHPOINT_USER_LOGIN=" + member.Username,
		"MATCHPOINT_USER_PASSWORD=" + apptest.Password,
		"MATCHPOINT_TEST_TLS_CERT=" + ca.CertFile,
		"MATCHPOINT_TEST_TLS_KEY=" + ca.KeyFile,
		"MATCHPOINT_WEBHOOK_CA_FILE=" + ca.File,
		"MATCHPOINT_WEBHOOK_ALLOW_PRIVATE=true",
	}
}

func runScript(t *testing.T, script string, env []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Dir = filepath.Dir(script)
	cmd.Env = append(withoutMatchpoint(os.Environ()), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s (%s):\n%s", script, time.Since(start).Round(time.Millisecond), tail(out.String(), 200))
	if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == skipStatus {
		t.Skipf("%s cannot run here (exit %d): %s", script, skipStatus, lastLine(out.String()))
	}
	if err != nil {
		t.Fatalf("%s failed: %v", script, err)
	}
}

// withoutMatchpoint drops MATCHPOINT_* variables of the environment the
// tests run in (a CI's PostgreSQL URL stays), so a script sees only the
// server this test started.
func withoutMatchpoint(env []string) []string {
	var out []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "MATCHPOINT_") && !strings.HasPrefix(kv, "MATCHPOINT_TEST_POSTGRES_URL=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func tail(s string, lines int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > lines {
		ls = append([]string{fmt.Sprintf("... (%d lines before)", len(ls)-lines)}, ls[len(ls)-lines:]...)
	}
	return strings.Join(ls, "\n")
}

func lastLine(s string) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	return ls[len(ls)-1]
}
