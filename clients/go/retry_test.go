package matchpoint

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	h := http.Header{}
	h.Set("Retry-After", "3")
	if d := backoff(0, h); d != 3*time.Second {
		t.Errorf("Retry-After: 3 waits %s", d)
	}
	h.Set("Retry-After", time.Now().Add(10*time.Second).UTC().Format(http.TimeFormat))
	if d := backoff(0, h); d < 8*time.Second || d > 10*time.Second {
		t.Errorf("Retry-After as a date 10 s ahead waits %s", d)
	}
	h.Set("Retry-After", "86400")
	if d := backoff(0, h); d != maxRetryAfter {
		t.Errorf("a day's Retry-After waits %s", d)
	}
	for attempt, want := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second} {
		d := backoff(attempt, nil)
		if d > want || d < want*3/4 {
			t.Errorf("attempt %d waits %s, want %s less up to a quarter", attempt, d, want)
		}
	}
}

func TestRetryable(t *testing.T) {
	for _, c := range []struct {
		e    Error
		want bool
	}{
		{Error{Status: 408}, true}, {Error{Status: 429}, true}, {Error{Status: 500}, true}, {Error{Status: 503}, true},
		{Error{Status: 409, Code: "idempotency_in_progress"}, true}, {Error{Status: 409, Code: "conflict"}, false},
		{Error{Status: 400}, false}, {Error{Status: 401}, false}, {Error{Status: 404}, false}, {Error{Status: 422}, false},
	} {
		if got := retryable(&c.e); got != c.want {
			t.Errorf("retryable(%d %s) = %v", c.e.Status, c.e.Code, got)
		}
	}
}
