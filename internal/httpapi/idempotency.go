package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/idempotency"
)

// replayedHeaders are the response headers kept with an idempotent answer.
var replayedHeaders = []string{"Content-Type", "Location", "Matchpoint-Maturity"}

// idempotent replays the first answer to a POST retried with the same
// Idempotency-Key and body, per credential. Server errors and requests the
// client abandoned are not kept, so a retry after one runs again.
func (s *server) idempotent(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, sent := r.Header["Idempotency-Key"]
		if !sent || r.Method != http.MethodPost || auth.FromContext(r.Context()) == nil {
			next.ServeHTTP(w, r)
			return
		}
		if len(key) > 1 {
			key = []string{""} // two keys for one request: refused as malformed
		}
		if err := idempotency.CheckKey(key[0]); err != nil {
			s.problems.writeErr(w, r, err)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				s.problems.writeErr(w, r, errBodyTooLarge)
				return
			}
			s.problems.writeErr(w, r, &apperr.Error{Kind: apperr.BadRequest, Code: "invalid_request", Message: "The request body could not be read."})
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		owner := auth.FromContext(r.Context()).CredentialKey()
		rec, err := s.idem.Begin(r.Context(), owner, key[0], idempotency.RequestHash(r.Method, r.URL.RequestURI(), body))
		if err != nil {
			if err == idempotency.ErrInProgress {
				w.Header().Set("Retry-After", "1")
			}
			s.problems.writeErr(w, r, err)
			return
		}
		if rec != nil {
			for k, v := range rec.Headers {
				w.Header().Set(k, v)
			}
			w.Header().Set("Idempotent-Replayed", "true")
			w.WriteHeader(rec.Status)
			_, _ = w.Write(rec.Body)
			return
		}
		// The answer is stored, or the key released, even when the client has
		// gone: on the request's context both would fail, and the key would
		// stay claimed for every retry.
		bg, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 10*time.Second)
		defer cancel()
		tw := &recorder{ResponseWriter: w, tee: &bytes.Buffer{}}
		finished := false
		defer func() {
			if !finished {
				// A panic, a server error or an abandoned request: forget the
				// key so the client can retry.
				if err := s.idem.Release(bg, owner, key[0]); err != nil {
					Logger(bg).ErrorContext(bg, "release idempotency key", "error", err.Error())
				}
			}
		}()
		next.ServeHTTP(tw, r)
		if tw.status == 0 || tw.status >= 499 {
			return
		}
		body, err = withoutFields(tw.tee.Bytes(), secretFieldsOf(r.Context()))
		if err != nil {
			Logger(r.Context()).ErrorContext(r.Context(), "redact idempotent response", "error", err.Error())
			return
		}
		saved := &idempotency.Record{Status: tw.status, Headers: map[string]string{}, Body: body}
		for _, h := range replayedHeaders {
			if v := w.Header().Get(h); v != "" {
				saved.Headers[h] = v
			}
		}
		if err := s.idem.Finish(bg, owner, key[0], saved); err != nil {
			Logger(bg).ErrorContext(bg, "store idempotent response", "error", err.Error())
			return
		}
		finished = true
	})
}

// withoutFields drops top-level fields from a JSON object body, so a secret
// shown once (a new API key) is never stored with the replayable response.
func withoutFields(body []byte, fields []string) ([]byte, error) {
	if len(fields) == 0 {
		return body, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, err
	}
	for _, f := range fields {
		delete(obj, f)
	}
	return json.Marshal(obj)
}
