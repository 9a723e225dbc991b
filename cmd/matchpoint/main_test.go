package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/config"
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
			// A running service sees each change the next request: it keeps
			// keys in memory, and these commands are another handle on its
			// database, as another process would be.
			addr, _, _, _ := startServe(t, getenv, "--addr", "127.0.0.1:0")
			me := func(wantStatus int, wantLimit string) {
				t.Helper()
				req, _ := http.NewRequest("GET", "http://"+addr+"/v1/users/me", nil)
				req.Header.Set("Authorization", "Bearer "+k["key"].(string))
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				if res.StatusCode != wantStatus || (wantLimit != "" && res.Header.Get("X-RateLimit-Limit") != wantLimit) {
					t.Fatalf("GET /v1/users/me: %d, limit %q; want %d, %q", res.StatusCode, res.Header.Get("X-RateLimit-Limit"), wantStatus, wantLimit)
				}
			}
			me(200, "1000")
			me(200, "1000")
			tier := runJSON(t, getenv, "admin", "set-tier", "--user", id, "--tier", "enterprise", "--limit", "5000000")
			if tier["tier"] != "enterprise" || tier["hourly_limit"] != float64(5000000) {
				t.Fatalf("set-tier = %v", tier)
			}
			me(200, "5000000")
			if tier := runJSON(t, getenv, "admin", "set-tier", "--user", id, "--tier", "pro"); tier["hourly_limit"] != float64(10000) {
				t.Fatalf("set-tier pro = %v", tier)
			}
			me(200, "10000")

			// Suspension from the terminal, with an end, then lifted.
			sus := runJSON(t, getenv, "admin", "suspend-user", "--user", id, "--reason", "chargeback fraud", "--hours", "24")
			if sus["suspended"] != true || sus["until"] == nil || !strings.HasPrefix(sus["decision_id"].(string), "dec_") {
				t.Fatalf("suspend-user = %v", sus)
			}
			me(403, "")
			if un := runJSON(t, getenv, "admin", "unsuspend-user", "--user", id, "--reason", "cleared"); un["lifted"] != true {
				t.Fatalf("unsuspend-user = %v", un)
			}
			me(200, "10000")
			if un := runJSON(t, getenv, "admin", "unsuspend-user", "--user", id, "--reason", "again"); un["lifted"] != false {
				t.Fatalf("unsuspend-user twice = %v", un)
			}

			// Bad input is an error message and a non-zero exit, not a crash.
			for _, args := range [][]string{
				{"admin", "suspend-user", "--user", id},
				{"admin", "suspend-user", "--user", "usr_nobody", "--reason", "x"},
				{"admin", "suspend-user", "--user", id, "--reason", "x", "--hours", "-1"},
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
	u := runJSON(t, getenv, "admin", "create-user", "--email", "a@example.com", "--username", "anna", "--password", "long enough password")
	key := runJSON(t, getenv, "admin", "create-api-key", "--user", u["id"].(string), "--name", "k", "--scopes", "read write")["key"].(string)

	addr, logs, stop, done := startServe(t, getenv)

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

// startServe runs the serve command until the test ends or stop is called,
// and returns the address it listens on, its log, and its exit code once it
// returns.
func startServe(t *testing.T, getenv func(string) string, args ...string) (addr string, logs *syncBuffer, stop func(), done <-chan int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	exit, finished := make(chan int, 1), make(chan struct{})
	logs = &syncBuffer{}
	start := time.Now()
	go func() {
		exit <- run(ctx, append([]string{"serve"}, args...), getenv, io.Discard, logs)
		close(finished)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-finished:
		case <-time.After(10 * time.Second):
			t.Error("serve did not stop")
		}
	})
	for deadline := time.Now().Add(10 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, line := range logLines(t, logs.String()) {
			if line["msg"] == "listening" {
				addr, _ = line["addr"].(string)
			}
		}
	}
	if addr == "" {
		t.Fatalf("server did not start: %s", logs.String())
	}
	t.Logf("started in %s", time.Since(start))
	return addr, logs, cancel, exit
}

// logLines decodes a JSON log.
func logLines(t *testing.T, log string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line is not JSON: %v\n%s", err, sc.Text())
		}
		lines = append(lines, line)
	}
	return lines
}

// TestServeFollowsItsAddress: with only an address given, the sign-in forms
// accept posts from that address and the OpenAPI document names it; every
// duration in the log carries its unit.
func TestServeFollowsItsAddress(t *testing.T) {
	getenv := env(map[string]string{"MATCHPOINT_DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "m.db")})
	runJSON(t, getenv, "admin", "create-user", "--email", "a@example.com", "--username", "anna", "--password", "long enough password")
	addr, logs, _, _ := startServe(t, getenv, "--addr", "127.0.0.1:0")
	base := "http://" + addr

	res, err := http.Get(base + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Servers []struct{ URL string } }
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if len(doc.Servers) != 1 || doc.Servers[0].URL != base {
		t.Errorf("openapi servers = %+v, want %s", doc.Servers, base)
	}

	// Sign in the way a browser on this address does.
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err = c.Get(base + "/login")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token in the sign-in page:\n%s", page)
	}
	form := url.Values{"csrf_token": {string(m[1])}, "login": {"anna"}, "password": {"long enough password"}, "return_to": {"/docs"}}
	req, _ := http.NewRequest("POST", base+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	res, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/docs" {
		t.Errorf("sign-in from %s: %d %s\n%s", base, res.StatusCode, res.Header.Get("Location"), body)
	}

	var requests int
	for _, line := range logLines(t, logs.String()) {
		switch line["msg"] {
		case "listening":
			if line["base_url"] != base {
				t.Errorf("listening line names base URL %v, want %s", line["base_url"], base)
			}
			if _, ok := line["startup_ms"].(float64); !ok {
				t.Errorf("listening line has no numeric startup_ms: %v", line)
			}
		case "request":
			requests++
			if ms, ok := line["duration_ms"].(float64); !ok || ms < 0 {
				t.Errorf("request line has no numeric duration_ms: %v", line)
			}
		}
		for k, v := range line {
			if k == "duration" || k == "startup" || k == "grace" {
				t.Errorf("%s = %v has no unit in its name: %v", k, v, line)
			}
		}
	}
	if requests != 3 {
		t.Errorf("%d request lines, want 3:\n%s", requests, logs.String())
	}
}

func TestDefaultLogFormat(t *testing.T) {
	if got := defaultLogFormat(&bytes.Buffer{}); got != "json" {
		t.Errorf("buffer: %s, want json", got)
	}
	// A character device that is not a terminal is a log collector's pipe
	// as far as the format goes.
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		defer null.Close()
		if got := defaultLogFormat(null); got != "json" {
			t.Errorf("%s: %s, want json", os.DevNull, got)
		}
	}
	tty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer tty.Close()
	if got := defaultLogFormat(tty); got != "text" {
		t.Errorf("terminal: %s, want text", got)
	}
	// An explicit setting wins.
	var buf bytes.Buffer
	newLogger(&config.Config{LogLevel: "info", LogFormat: "text"}, &buf).Info("hello")
	if !strings.HasPrefix(buf.String(), "time=") {
		t.Errorf("text format: %q", buf.String())
	}
}

// TestHelp: every way of asking for help exits 0 and shows, on stdout, the
// flags of that command and no other.
func TestHelp(t *testing.T) {
	serverOnly := []string{"-addr", "-base-url", "-docs-url", "-log-level", "-log-format"}
	for _, tc := range []struct {
		args        []string
		want, never []string
	}{
		{[]string{"--help"}, []string{"usage: matchpoint <command>", "admin", "version"}, nil},
		{[]string{"-h"}, []string{"usage: matchpoint <command>"}, nil},
		{[]string{"help"}, []string{"usage: matchpoint <command>"}, nil},
		{[]string{"serve", "--help"}, append([]string{"usage: matchpoint serve", "-database-url"}, serverOnly...), nil},
		{[]string{"serve", "-h"}, []string{"usage: matchpoint serve", "-addr"}, nil},
		{[]string{"help", "serve"}, []string{"usage: matchpoint serve", "-addr"}, nil},
		{[]string{"migrate", "--help"}, []string{"usage: matchpoint migrate", "status", "-database-url"}, serverOnly},
		{[]string{"admin", "--help"}, []string{"usage: matchpoint admin", "create-user", "create-client", "create-api-key", "set-tier", "set-role"}, nil},
		{[]string{"admin", "-h"}, []string{"usage: matchpoint admin", "set-role"}, nil},
		{[]string{"admin", "help"}, []string{"usage: matchpoint admin", "set-role"}, nil},
		{[]string{"help", "admin"}, []string{"usage: matchpoint admin", "set-role"}, nil},
		{[]string{"admin", "create-user", "--help"}, []string{"usage: matchpoint admin create-user", "-database-url", "-email", "-username", "-password", "-first-name", "-last-name", "-role"}, append([]string{"-tier", "-redirect-uri"}, serverOnly...)},
		{[]string{"admin", "create-client", "-h"}, []string{"-database-url", "-name", "-redirect-uri", "-scopes", "-grant-types", "-public", "-owner"}, append([]string{"-email", "-tier"}, serverOnly...)},
		{[]string{"admin", "create-api-key", "--help"}, []string{"-database-url", "-user", "-name", "-scopes"}, append([]string{"-email", "-owner"}, serverOnly...)},
		{[]string{"admin", "set-tier", "--help"}, []string{"-database-url", "-user", "-tier", "-limit"}, append([]string{"-role", "-name"}, serverOnly...)},
		{[]string{"admin", "help", "set-role"}, []string{"usage: matchpoint admin set-role", "-database-url", "-user", "-role"}, append([]string{"-tier"}, serverOnly...)},
		{[]string{"help", "admin", "set-role"}, []string{"usage: matchpoint admin set-role", "-role"}, serverOnly},
		{[]string{"bench", "--help"}, []string{"usage: matchpoint bench", "api", "token"}, nil},
		{[]string{"bench", "api", "-h"}, []string{"usage: matchpoint bench api", "-postgres", "-concurrency", "-duration", "-rounds"}, append([]string{"-grants", "-database-url"}, serverOnly...)},
		{[]string{"bench", "token", "--help"}, []string{"usage: matchpoint bench token", "-postgres", "-grants"}, append([]string{"-rounds", "-duration", "-database-url"}, serverOnly...)},
		{[]string{"version", "--help"}, []string{"usage: matchpoint version"}, append([]string{"-database-url"}, serverOnly...)},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			// A database no command may open: help opens nothing.
			getenv := env(map[string]string{"MATCHPOINT_DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "missing", "m.db")})
			if code := run(context.Background(), tc.args, getenv, &out, &errb); code != 0 || errb.Len() != 0 {
				t.Fatalf("exit %d, stderr %q", code, errb.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("help lacks %q:\n%s", w, out.String())
				}
			}
			for _, n := range tc.never {
				if strings.Contains(out.String(), "  "+n+" ") {
					t.Errorf("help lists %s, which this command does not use:\n%s", n, out.String())
				}
			}
		})
	}
}

// TestBadCommandLines: a stray argument, an unknown flag or command is an
// error that names it, with exit code 2, before anything runs.
func TestBadCommandLines(t *testing.T) {
	getenv := env(map[string]string{
		"MATCHPOINT_DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "m.db"),
		"MATCHPOINT_ADDR":         "127.0.0.1:0",
	})
	for _, tc := range []struct {
		args []string
		say  string
	}{
		{[]string{"serve", "now"}, `unexpected argument "now"`},
		{[]string{"serve", "--addr", "127.0.0.1:0", "now", "please"}, `unexpected arguments "now please"`},
		{[]string{"serve", "--port", "80"}, "flag provided but not defined: -port"},
		{[]string{"migrate", "status", "now"}, `unexpected argument "now"`},
		{[]string{"migrate", "down"}, `unknown migrate command "down"`},
		{[]string{"admin", "create-user", "--email", "x@example.com", "bob"}, `unexpected argument "bob"`},
		{[]string{"admin", "set-tier", "--user", "usr_x", "--tier", "pro", "--limit", "many"}, `invalid value "many" for flag -limit`},
		{[]string{"admin", "create-user", "--addr", "127.0.0.1:9"}, "flag provided but not defined: -addr"},
		{[]string{"admin", "delete-everything"}, `unknown admin command "delete-everything"`},
		{[]string{"admin"}, "usage: matchpoint admin"},
		{[]string{"bench", "api", "now"}, `unexpected argument "now"`},
		{[]string{"bench", "both"}, `unknown bench command "both"`},
		{[]string{"version", "now"}, `unexpected argument "now"`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{nil, "usage: matchpoint <command>"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // a serve that wrongly starts stops at once
			var out, errb bytes.Buffer
			code := run(ctx, tc.args, getenv, &out, &errb)
			if code != 2 || !strings.Contains(errb.String(), tc.say) || out.Len() != 0 {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out.String(), errb.String(), tc.say)
			}
		})
	}
	// A flag after the positional argument is read, not ignored.
	db := "sqlite:" + filepath.Join(t.TempDir(), "other.db")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"migrate", "up", "--database-url", db}, env(nil), &out, &errb); code != 0 {
		t.Fatalf("migrate up --database-url: exit %d: %s", code, errb.String())
	}
	if _, err := os.Stat(strings.TrimPrefix(db, "sqlite:")); err != nil {
		t.Errorf("migrate up did not use --database-url given after up: %v", err)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		v := runJSON(t, env(nil), args...)
		if v["version"] != app.Version || v["go"] == "" {
			t.Errorf("matchpoint %s = %v", args[0], v)
		}
	}
}
