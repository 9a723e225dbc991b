package apptest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
)

// Anything that runs on several nodes is tested with several service
// processes over one PostgreSQL database: the real binary, started with
// "matchpoint serve", so nothing is shared but the database (and Redis when
// a test sets MATCHPOINT_REDIS_URL).

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary builds the matchpoint command once per test binary and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "matchpoint-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "matchpoint")
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/matchpoint")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// Node is one running service process.
type Node struct {
	URL string
	cmd *exec.Cmd
	log *bytes.Buffer
	mu  sync.Mutex
}

// Log returns what the process has written to stderr so far.
func (n *Node) Log() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.log.String()
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// nodeLogTail is how much of a node's log a failed test shows.
const nodeLogTail = 16 << 10

// StartNode runs "matchpoint serve" on a free loopback port over dbURL, with
// extra environment variables (KEY=value), and waits until it is ready. It
// is stopped with SIGTERM at the end of the test.
func StartNode(t testing.TB, dbURL string, env ...string) *Node {
	t.Helper()
	bin := Binary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	n := &Node{URL: "http://" + addr, log: &bytes.Buffer{}}
	n.cmd = exec.Command(bin, "serve")
	n.cmd.Env = append(os.Environ(), "MATCHPOINT_ADDR="+addr, "MATCHPOINT_BASE_URL="+n.URL,
		"MATCHPOINT_DATABASE_URL="+dbURL, "MATCHPOINT_LOG_FORMAT=json", "MATCHPOINT_LOG_LEVEL=info")
	n.cmd.Env = append(n.cmd.Env, env...)
	n.cmd.Stderr = lockedWriter{&n.mu, n.log}
	n.cmd.Stdout = lockedWriter{&n.mu, n.log}
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.Stop(t)
		// A failed cluster test shows what its nodes said: what went wrong
		// in a process is otherwise lost with it.
		if t.Failed() {
			l := n.Log()
			if len(l) > nodeLogTail {
				l = "...\n" + l[len(l)-nodeLogTail:]
			}
			t.Logf("node %s (pid %d) logged:\n%s", n.URL, n.cmd.Process.Pid, l)
		}
	})
	deadline := time.Now().Add(90 * time.Second) // the gazetteer loads before a node serves: seconds, more on a busy machine
	for {
		res, err := http.Get(n.URL + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return n
			}
		}
		if time.Now().After(deadline) || (n.cmd.ProcessState != nil && n.cmd.ProcessState.Exited()) {
			t.Fatalf("node at %s did not become ready: %v\n%s", n.URL, err, n.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop sends SIGTERM and waits for the process to finish its requests and exit.
func (n *Node) Stop(t testing.TB) {
	if n.cmd.Process == nil || n.cmd.ProcessState != nil {
		return
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- n.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(40 * time.Second):
		_ = n.cmd.Process.Kill()
		<-done
		t.Errorf("node %s did not stop on SIGTERM", n.URL)
	}
}

// PID is the process id; webhook leases and attempts name their node by it.
func (n *Node) PID() int { return n.cmd.Process.Pid }

// Kill ends the process at once (SIGKILL), as a crash would.
func (n *Node) Kill() {
	if n.cmd.Process != nil && n.cmd.ProcessState == nil {
		_ = n.cmd.Process.Kill()
		_ = n.cmd.Wait()
	}
}

// Cluster is several service processes over one fresh PostgreSQL schema, and
// the service assembled in the test process over the same database, for
// fixtures (users, keys) and for looking at what the nodes wrote.
type Cluster struct {
	DBURL string
	Nodes []*Node
	App   *app.App
}

// StartCluster starts n nodes over a fresh PostgreSQL schema; it skips the
// test when no PostgreSQL is configured.
func StartCluster(t *testing.T, n int, env ...string) *Cluster {
	t.Helper()
	dbURL := testdb.NewURL(t, store.Postgres)
	c := &Cluster{DBURL: dbURL}
	a, err := app.Open(context.Background(), config.Config{DatabaseURL: dbURL, BaseURL: "http://127.0.0.1", DocsURL: "http://127.0.0.1/docs/errors"},
		app.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	c.App = a
	for range n {
		c.Nodes = append(c.Nodes, StartNode(t, dbURL, env...))
	}
	return c
}
