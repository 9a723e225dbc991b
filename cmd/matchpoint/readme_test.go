package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMain lets the README test run this test binary as the matchpoint
// command: the walkthrough's ./mp is a script that execs it.
func TestMain(m *testing.M) {
	if os.Getenv("MATCHPOINT_TEST_AS_COMMAND") == "1" {
		os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// walkthrough returns the shell blocks of the README's walkthrough, from
// "## Walkthrough" to the next section, in order.
func walkthrough(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, "## Walkthrough")
	if start < 0 {
		t.Fatal("README.md has no walkthrough")
	}
	end := strings.Index(s[start+1:], "\n## ")
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(s[start:start+1+end], -1) {
		blocks = append(blocks, m[1])
	}
	return blocks
}

// TestREADMEWalkthrough runs the README's walkthrough as a reader pastes it,
// against the serve command: twice, each in a new shell, then its curl steps
// once more in the second shell (same client, consent already given). Only
// the address differs (the test's own port) and ./mp is this binary.
func TestREADMEWalkthrough(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the walkthrough needs %s", tool)
		}
	}
	blocks := walkthrough(t)
	if len(blocks) < 5 {
		t.Fatalf("walkthrough has %d shell blocks, want the setup, browser, curl, token and API key steps", len(blocks))
	}
	dir := t.TempDir()
	dbURL := "sqlite:" + filepath.Join(dir, "data", "matchpoint.db")
	addr, _, _, _ := startServe(t, env(map[string]string{"MATCHPOINT_DATABASE_URL": dbURL, "MATCHPOINT_ADDR": "127.0.0.1:0"}))
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mp"), []byte("#!/bin/sh\nMATCHPOINT_TEST_AS_COMMAND=1 exec '"+self+"' \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := func(blocks []string) string {
		s := strings.Join(blocks, "\n")
		if !strings.Contains(s, "go build -o mp ./cmd/matchpoint\n") {
			t.Fatal("the walkthrough no longer builds ./mp as this test expects")
		}
		s = strings.ReplaceAll(s, "go build -o mp ./cmd/matchpoint\n", "")
		return strings.ReplaceAll(s, "http://localhost:8080", "http://"+addr)
	}
	// The curl steps: from the block that signs in.
	curlFrom := -1
	for i, b := range blocks {
		if strings.Contains(b, "/login") && curlFrom < 0 {
			curlFrom = i
		}
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("walk.sh", script(blocks))
	write("again.sh", strings.ReplaceAll(strings.Join(blocks[curlFrom:], "\n"), "http://localhost:8080", "http://"+addr))

	shell := func(name, command string) {
		cmd := exec.Command("bash", "-c", command)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "MATCHPOINT_DATABASE_URL="+dbURL)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		t.Logf("%s:\n%s", name, out)
	}
	shell("first run", "source walk.sh > run1.out")
	checkWalkthroughRun(t, filepath.Join(dir, "run1.out"))
	shell("second run, then the curl steps again", "source walk.sh > run2.out; source again.sh > run3.out")
	checkWalkthroughRun(t, filepath.Join(dir, "run2.out"))
	checkWalkthroughRun(t, filepath.Join(dir, "run3.out"))
}

// checkWalkthroughRun reads what one run printed: two token sets (code
// exchange, refresh), ann's profile three times (with the access token,
// after the PATCH, with the API key), and nothing else that is JSON on one
// line (an error).
func checkWalkthroughRun(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var tokens, profiles int
	var unexpected []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var o map[string]any
		if json.Unmarshal(sc.Bytes(), &o) != nil {
			continue // create-user's indented JSON, the authorization link
		}
		switch {
		case o["access_token"] != nil:
			tokens++
		case o["object"] == "user" && o["username"] == "ann":
			profiles++
		default:
			unexpected = append(unexpected, sc.Text())
		}
	}
	if tokens != 2 || profiles != 3 || len(unexpected) > 0 {
		b, _ := os.ReadFile(path)
		t.Errorf("%s: %d token sets, %d profiles (want 2 and 3), errors %s\n%s", filepath.Base(path), tokens, profiles,
			fmt.Sprint(unexpected), b)
	}
}

// TestREADMENamesEverySetting: every MATCHPOINT_ variable a setting reads
// (named in its flag's usage, which serve --help prints) appears in the
// README, so a new setting cannot ship undocumented.
func TestREADMENamesEverySetting(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("../../internal/config/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no config sources: %v", err)
	}
	seen := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`\((MATCHPOINT_[A-Z0-9_]+)\)`).FindAllStringSubmatch(string(src), -1) {
			seen++
			if !strings.Contains(string(readme), "`"+m[1]+"`") {
				t.Errorf("README.md does not name %s (%s)", m[1], filepath.Base(f))
			}
		}
	}
	if seen < 10 {
		t.Fatalf("found only %d settings: has the usage format changed?", seen)
	}
}
