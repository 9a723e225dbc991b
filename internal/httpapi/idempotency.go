package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/idempotency"
)

// replayedHeaders are the response headers kept with an idempotent answer.
var replayedHeaders = []string{"Content-Type", "Location", "Matchpoint-Maturity"}

// idempotent replays the first answer to a POST retried with the same
// Idempotency-Key and body, per credential. Server errors are not kept, so a
// retry after one runs again.
func (s *server) idempotent(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		if r.Method != http.MethodPost || key == "" || auth.FromContext(r.Context()) == nil {
			next.ServeHTTP(w, r)
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
		rec, err := s.idem.Begin(r.Context(), owner, key, idempotency.RequestHash(r.Method, r.URL.RequestURI(), body))
		if err != nil {
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
		tw := &recorder{ResponseWriter: w, tee: &bytes.Buffer{}}
		finished := false
		defer func() {
			if !finished {
				// A panic or a server error: forget the key so the client can retry.
				_ = s.idem.Release(r.Context(), owner, key)
			}
		}()
		next.ServeHTTP(tw, r)
		if tw.status == 0 || tw.status >= 500 {
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
		if err := s.idem.Finish(r.Context(), owner, key, saved); err != nil {
			Logger(r.Context()).ErrorContext(r.Context(), "store idempotent response", "error", err.Error())
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
