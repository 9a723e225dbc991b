package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/testdb"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// runJSON runs the command and decodes its JSON output.
func runJSON(t *testing.T, getenv func(string) string, args ...string) map[string]any {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(context.Background(), args, getenv, &out, &errb); code != 0 {
		t.Fatalf("matchpoint %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("matchpoint %s printed no JSON object: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return m
}

func TestAdminCommands(t *testing.T) {
	for _, d := range testdb.Engines() {
		t.Run(string(d), func(t *testing.T) {
			getenv := env(map[string]string{"MATCHPOINT_DATABASE_URL": testdb.NewURL(t, d)})
			u := runJSON(t, getenv, "admin", "create-user", "--email", "ops@example.com", "--username", "ops", "--password", "long enough password", "--first-name", "Olga")
			id, _ := u["id"].(string)
			if !strings.HasPrefix(id, "usr_") || u["email"] != "ops@example.com" || u["tier"] != "free" {
				t.Fatalf("create-user = %v", u)
			}
			c := runJSON(t, getenv, "admin", "create-client", "--name", "App", "--redirect-uri", "https://app.example/cb",
				"--redirect-uri", "com.example.app:/cb", "--scopes", "read write")
			if !strings.HasPrefix(c["client_id"].(string), "app_") || !strings.HasPrefix(c["client_secret"].(string), "mps_") || c["scopes"] != "read write" {
				t.Fatalf("create-client = %v", c)
			}
			pub := runJSON(t, getenv, "admin", "create-client", "--name", "Mobile", "--redirect-uri", "com.example.app:/cb", "--public", "--owner", id)
			if _, has := pub["client_secret"]; has || pub["owner_id"] != id {
				t.Fatalf("public client = %v", pub)
			}
			k := runJSON(t, getenv, "admin", "create-api-key", "--user", id, "--name", "ci", "--scopes", "read")
			if !strings.HasPrefix(k["key"].(string), "mpk_live_") {
				t.Fatalf("create-api-key = %v", k)
			}
			tier := runJSON(t, getenv, "admin", "set-tier", "--user", id, "--tier", "enterprise", "--limit", "5000000")
			if tier["tier"] != "enterprise" || tier["hourly_limit"] != float64(5000000) {
				t.Fatalf("set-tier = %v", tier)
			}
			if tier := runJSON(t, getenv, "admin", "set-tier", "--user", id, "--tier", "pro"); tier["hourly_limit"] != float64(10000) {
				t.Fatalf("set-tier pro = %v", tier)
			}

			// Bad input is an error message and a non-zero exit, not a crash.
			for _, args := range [][]string{
				{"admin", "create-client", "--name", "Bad", "--redirect-uri", "http://example.com/cb"},
				{"admin", "create-user", "--email", "ops@example.com", "--username", "ops2", "--password", "long enough password"},
				{"admin", "set-tier", "--user", id, "--tier", "platinum"},
				{"admin", "create-api-key", "--user", "usr_nobody", "--name", "x"},
				{"admin", "nonsense"},
			} {
				var out, errb bytes.Buffer
				if code := run(context.Background(), args, getenv, &out, &errb); code == 0 || errb.Len() == 0 {
					t.Errorf("matchpoint %s: exit %d, stderr %q", strings.Join(args, " "), code, errb.String())
				}
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe to read while the server writes logs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// slowBody sends half a request body, then waits to be told to send the rest.
type slowBody struct {
	first, rest []byte
	sentFirst   bool
	release     chan struct{}
	firstSent   chan struct{}
}

func (s *slowBody) Read(p []byte) (int, error) {
	if !s.sentFirst {
		s.sentFirst = true
		n := copy(p, s.first)
		close(s.firstSent)
		return n, nil
	}
	if s.rest == nil {
		return 0, io.EOF
	}
	<-s.release
	n := copy(p, s.rest)
	s.rest = nil
	return n, nil
}

// TestServeGracefulShutdown starts the real command on SQLite, begins a
// request, stops the server (as SIGTERM does) while the request is still
// being sent, and checks the request completes.
func TestServeGracefulShutdown(t *testing.T) {
	dir := t.TempDir()
	getenv := env(map[string]string{
		"MATCHPOINT_DATABASE_URL": "sqlite:" + filepath.Join(dir, "m.db"),
		"MATCHPOINT_ADDR":         "127.0.0.1:0",
	})
	var out bytes.Buffer
	u := runJSON(t, getenv, "admin", "create-user", "--email", "a@example.com", "--username", "anna", "--password", "long enough password")
	key := runJSON(t, getenv, "admin", "create-api-key", "--user", u["id"].(string), "--name", "k", "--scopes", "read write")["key"].(string)

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	logs := &syncBuffer{}
	done := make(chan int, 1)
	start := time.Now()
	go func() { done <- run(ctx, []string{"serve"}, getenv, &out, logs) }()
	var addr string
	for deadline := time.Now().Add(10 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		sc := bufio.NewScanner(strings.NewReader(logs.String()))
		for sc.Scan() {
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
				addr = line.Addr
			}
		}
	}
	if addr == "" {
		t.Fatalf("server did not start: %s", logs.String())
	}
	t.Logf("started in %s", time.Since(start))

	body := &slowBody{first: []byte(`{"bio":"still `), rest: []byte(`here"}`), release: make(chan struct{}), firstSent: make(chan struct{})}
	req, _ := http.NewRequest("PATCH", "http://"+addr+"/v1/users/me", body)
	req.ContentLength = int64(len(`{"bio":"still here"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	type result struct {
		status int
		body   string
		err    error
	}
	res := make(chan result, 1)
	go func() {
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			res <- result{err: err}
			return
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		res <- result{status: r.StatusCode, body: string(b)}
	}()
	<-body.firstSent
	time.Sleep(100 * time.Millisecond) // the server is now reading the body
	stop()                             // what SIGTERM does
	time.Sleep(100 * time.Millisecond)
	if _, err := http.Get("http://" + addr + "/healthz"); err == nil {
		t.Error("new connections are still accepted after shutdown began")
	}
	close(body.release)
	r := <-res
	if r.err != nil || r.status != 200 || !strings.Contains(r.body, `"bio":"still here"`) {
		t.Fatalf("in-flight request: %v %d %s", r.err, r.status, r.body)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exit %d: %s", code, logs.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
	if !strings.Contains(logs.String(), `"msg":"stopped"`) {
		t.Errorf("no clean stop in logs:\n%s", logs.String())
	}

}
