package httpapi

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"time"
)

// bodyReadDeadline lets a read deadline bound the reading of a request body,
// and lifts it once the body is read.
//
// Why: huma bounds body reading with a read deadline on the connection (5 s)
// and never lifts it. When the body has already been read to its end (the
// string and idempotency checks read it before huma does), net/http is
// reading ahead on the connection in the background; huma's deadline then
// ends that read, which the server takes for a client gone: it cancels the
// request's context. A write that took more than 5 s (a lock wait, a node
// starting cold, a loaded machine) was rolled back and answered 499 to a
// client still waiting for it. net/http lifts deadlines itself when it
// starts reading ahead, so a deadline set before the end of the body is
// harmless: only the later ones are dropped.
func bodyReadDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		d := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w)}
		r.Body = &watchedBody{ReadCloser: r.Body, atEnd: d.bodyRead}
		next.ServeHTTP(d, r)
	})
}

// deadlineWriter applies read deadlines while the body is being read and
// ignores them after.
type deadlineWriter struct {
	http.ResponseWriter
	rc   *http.ResponseController
	mu   sync.Mutex
	read bool // the body was read to its end
}

// SetReadDeadline is what huma.SetReadDeadline finds first.
func (d *deadlineWriter) SetReadDeadline(t time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.read {
		return nil // nothing of this request is left to read
	}
	return d.rc.SetReadDeadline(t)
}

func (d *deadlineWriter) bodyRead() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.read {
		d.read = true
		_ = d.rc.SetReadDeadline(time.Time{})
	}
}

func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// watchedBody calls atEnd when its reader reaches the end of the body.
type watchedBody struct {
	io.ReadCloser
	atEnd func()
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.atEnd()
	}
	return n, err
}
