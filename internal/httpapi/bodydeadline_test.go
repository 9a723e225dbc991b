package httpapi

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// slowWrite is the API's order of things: a middleware reads the whole
// body first (as the string check does), then the operation sets huma's
// body deadline and reads the copy, then works longer than that deadline;
// it answers whether its context survived.
func slowWrite(deadline, work time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "body: "+err.Error(), http.StatusRequestTimeout)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		_ = huma.SetReadDeadline(w, time.Now().Add(deadline))
		_, _ = io.ReadAll(r.Body)
		select {
		case <-time.After(work):
			w.WriteHeader(http.StatusCreated)
		case <-r.Context().Done():
			w.WriteHeader(499)
		}
	})
}

// TestBodyReadDeadlineOutlivedByTheHandler: a handler that works past the
// body's read deadline keeps its context; without the middleware the server
// cancels it (the failure this guards against).
func TestBodyReadDeadlineOutlivedByTheHandler(t *testing.T) {
	for _, c := range []struct {
		name string
		h    http.Handler
		want int
	}{
		{"with bodyReadDeadline", bodyReadDeadline(slowWrite(100*time.Millisecond, 400*time.Millisecond)), http.StatusCreated},
		{"without", slowWrite(100*time.Millisecond, 400*time.Millisecond), 499},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.h)
			defer srv.Close()
			res, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"title":"x"}`))
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != c.want {
				t.Fatalf("status %d, want %d", res.StatusCode, c.want)
			}
		})
	}
}

// TestBodyReadDeadlineStillBoundsTheBody: a deadline set before the body is
// read still cuts off a client that sends half a body and stalls.
func TestBodyReadDeadlineStillBoundsTheBody(t *testing.T) {
	srv := httptest.NewServer(bodyReadDeadline(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = huma.SetReadDeadline(w, time.Now().Add(200*time.Millisecond))
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "body: "+err.Error(), http.StatusRequestTimeout)
			return
		}
		w.WriteHeader(http.StatusCreated)
	})))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	_, _ = io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"title\":")
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(conn)
	if !strings.Contains(string(b), " 408 ") {
		t.Fatalf("answer to a stalled body: %q", b)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("a stalled body held the handler %s", took)
	}
}
