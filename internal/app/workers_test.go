package app

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRunStartsEveryWorkerAndWaits: Run starts each background worker, and
// returns only once every one of them has returned after ctx ended.
func TestRunStartsEveryWorkerAndWaits(t *testing.T) {
	var logs syncBuffer
	a, err := Open(context.Background(), config.Config{DatabaseURL: testdb.NewURL(t, store.SQLite), BaseURL: "http://127.0.0.1",
		DocsURL: "http://127.0.0.1/docs/errors"}, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); a.Run(ctx) }()
	time.Sleep(300 * time.Millisecond)
	select {
	case <-done:
		t.Fatal("Run returned before its context ended")
	default:
	}
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	out := logs.String()
	for _, w := range a.workers(a.cfg, a.log) {
		if !strings.Contains(out, "worker stopped\" component=workers worker="+w.name+"\n") {
			t.Errorf("worker %s: no sign it ran and stopped in\n%s", w.name, out)
		}
	}
	if !strings.Contains(out, "background workers stopped") {
		t.Errorf("Run did not log that it stopped:\n%s", out)
	}
}
