package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a redis-server process of the test's own, on a free loopback
// port, without persistence: a test may stop it and start it again without
// touching the Redis that other tests share.
type Server struct {
	URL  string
	port int
	dir  string
	cmd  *exec.Cmd
}

// StartServer runs redis-server on a free port until the test ends. It
// skips the test when redis-server is not installed, unless
// MATCHPOINT_TEST_REDIS_URL is set (CI), where a missing Redis is a failure.
func StartServer(t testing.TB) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("MATCHPOINT_TEST_REDIS_URL") != "" {
			t.Fatalf("redis-server: %v", err)
		}
		t.Skipf("redis-server is not installed (%v)", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s := &Server{URL: fmt.Sprintf("redis://127.0.0.1:%d/0", port), port: port, dir: t.TempDir()}
	s.Start(t)
	t.Cleanup(s.Stop)
	return s
}

// Start runs the server (again) on its port and waits until it answers.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	s.cmd = exec.Command("redis-server", "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", s.dir, "--logfile", "")
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	opt, _ := redis.ParseURL(s.URL)
	c := redis.NewClient(opt)
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on port %d did not answer: %v", s.port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop ends the server (SIGTERM) and waits for it: Redis is gone, its
// counters with it.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil || s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}
