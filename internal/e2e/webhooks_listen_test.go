package e2e

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/pkg/webhook"
)

// TestListen runs "matchpoint listen" against the service: it prints a
// secret, forwards the account's events to a local plain-http endpoint
// signed with it, prints the endpoint's answer, records it in the delivery
// log, and deletes its subscription when interrupted.
func TestListen(t *testing.T) {
	bin := apptest.Binary(t)
	eachWebhookServer(t, "", func(t *testing.T, s *apptest.Server, _ *apptest.Receiver) {
		var mu sync.Mutex
		var got []apptest.Received
		local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			got = append(got, apptest.Received{Header: r.Header.Clone(), Body: b})
			mu.Unlock()
			w.WriteHeader(202)
		}))
		defer local.Close()
		ann := s.User(t, "ann")
		key := keyOf(t, s.App, ann.ID, "read", "write")
		// The test clock stands still: without this step ann's user.created
		// and the subscription would share one instant, and the subscription
		// receives what happens after it is made.
		s.Clock.Advance(time.Millisecond)

		cmd := exec.Command(bin, "listen", "--api-key", key, "--forward-to", local.URL+"/hook", "--events", "user.*", "--base-url", s.URL)
		out, _ := cmd.StdoutPipe()
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		lines := make(chan string, 100)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		next := func(what string) string {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("listen exited before %s: %s", what, stderr.String())
				}
				return l
			case <-time.After(20 * time.Second):
				t.Fatalf("no %s from listen: %s", what, stderr.String())
			}
			return ""
		}
		if l := next("ready line"); !strings.HasPrefix(l, "Ready!") {
			t.Fatalf("first line: %q", l)
		}
		secret := regexp.MustCompile(`whsec_\S+`).FindString(next("secret line"))
		if secret == "" {
			t.Fatal("no secret printed")
		}
		r := api(t, s, "GET", "/api/v1/webhooks", key, "")
		if !strings.Contains(string(r.Body), `"transport":"stream"`) {
			t.Fatalf("no stream subscription: %s", r.Body)
		}

		if r := api(t, s, "PATCH", "/v1/users/me", key, `{"first_name":"Annie"}`); r.Status != 200 {
			t.Fatalf("patch: %d %s", r.Status, r.Body)
		}
		line := next("delivery line")
		if !strings.Contains(line, "user.updated") || !strings.Contains(line, "[202]") {
			t.Errorf("delivery line: %q", line)
		}
		mu.Lock()
		if len(got) != 1 {
			t.Fatalf("local endpoint got %d requests", len(got))
		}
		wh, _ := webhook.New(secret)
		if err := wh.Verify(got[0].Body, got[0].Header); err != nil {
			t.Errorf("forwarded signature: %v", err)
		}
		if env := parseEnvelope(t, got[0].Body); env.Type != "user.updated" || !strings.Contains(string(env.Data["user"]), "ann@example.com") {
			t.Errorf("forwarded body: %s", got[0].Body)
		}
		mu.Unlock()
		apptest.WaitFor(t, "the acknowledgement in the log", func() bool {
			subs := api(t, s, "GET", "/api/v1/webhooks", key, "").JSON(t)["data"].([]any)
			id := subs[0].(map[string]any)["id"].(string)
			return strings.Contains(string(api(t, s, "GET", "/api/v1/webhooks/"+id+"/deliveries?status=succeeded", key, "").Body), `"status_code":202`)
		})

		_ = cmd.Process.Signal(syscall.SIGINT)
		for range lines {
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("listen exit: %v %s", err, stderr.String())
		}
		if r := api(t, s, "GET", "/api/v1/webhooks", key, ""); strings.Contains(string(r.Body), "whk_") {
			t.Errorf("the temporary subscription is still there: %s", r.Body)
		}
	})
}
