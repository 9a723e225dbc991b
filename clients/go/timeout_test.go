package matchpoint_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	matchpoint "github.com/matchpoint-api/matchpoint/clients/go"
)

// An endpoint that answers too late: each attempt times out, the timeout
// is retried like a lost connection, and the last one is a ConnectionError.
func TestTimeoutIsRetriedThenAConnectionError(t *testing.T) {
	var attempts atomic.Int32
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attempts.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	c := matchpoint.NewClient(slow.URL, matchpoint.WithAPIKey("mpk_test"), matchpoint.WithTimeout(200*time.Millisecond), matchpoint.WithMaxRetries(1))
	_, err := c.GetMe(context.Background())
	var cerr *matchpoint.ConnectionError
	if !errors.As(err, &cerr) || !cerr.Timeout {
		t.Fatalf("got %v, want a timeout", err)
	}
	if n := attempts.Load(); n != 2 {
		t.Fatalf("%d attempts, want 2", n)
	}
}
