package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/idempotency"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
)

// idemHarness runs the idempotency middleware over a real database in front
// of a handler the test controls.
type idemHarness struct {
	s     *server
	clk   *clock.Fake
	calls atomic.Int32
}

func newIdemHarness(t *testing.T, db *store.DB) *idemHarness {
	clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	return &idemHarness{clk: clk, s: &server{idem: idempotency.NewService(store.NewIdempotency(db), clk),
		problems: &problems{docsURL: "/docs/errors"}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}}
}

// do sends a POST with key through the middleware to handler, on ctx.
func (h *idemHarness) do(ctx context.Context, key []string, handler http.HandlerFunc) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/v1/things", strings.NewReader(`{"a":1}`)).WithContext(
		auth.WithPrincipal(ctx, &auth.Principal{UserID: "usr_1", APIKeyID: "key_1"}))
	for _, k := range key {
		r.Header.Add("Idempotency-Key", k)
	}
	w := httptest.NewRecorder()
	h.s.idempotent(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.calls.Add(1)
		handler(w, r)
	})).ServeHTTP(w, r)
	return w
}

func created(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write([]byte(`{"id":"thing_1"}`))
}

func TestIdempotency(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		t.Run("an answer is kept when the client has gone", func(t *testing.T) {
			h := newIdemHarness(t, db)
			ctx, cancel := context.WithCancel(context.Background())
			h.do(ctx, []string{"gone-1"}, func(w http.ResponseWriter, r *http.Request) {
				cancel() // the client disconnects while the work is done
				created(w, r)
			})
			w := h.do(context.Background(), []string{"gone-1"}, created)
			if w.Code != 201 || w.Header().Get("Idempotent-Replayed") != "true" || h.calls.Load() != 1 {
				t.Fatalf("retry: %d replayed=%q calls=%d %s", w.Code, w.Header().Get("Idempotent-Replayed"), h.calls.Load(), w.Body)
			}
		})
		t.Run("an abandoned request is not kept", func(t *testing.T) {
			h := newIdemHarness(t, db)
			h.do(context.Background(), []string{"gone-2"}, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(499) })
			if w := h.do(context.Background(), []string{"gone-2"}, created); w.Code != 201 || h.calls.Load() != 2 {
				t.Fatalf("retry after 499: %d, calls %d", w.Code, h.calls.Load())
			}
		})
		t.Run("a claim in progress answers 409 with Retry-After, and is taken over after a minute", func(t *testing.T) {
			h := newIdemHarness(t, db)
			hash := idempotency.RequestHash(http.MethodPost, "/v1/things", []byte(`{"a":1}`))
			if rec, err := h.s.idem.Begin(context.Background(), "key:key_1", "stuck", hash); err != nil || rec != nil {
				t.Fatal(rec, err)
			}
			w := h.do(context.Background(), []string{"stuck"}, created)
			if w.Code != 409 || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "idempotency_in_progress") {
				t.Fatalf("in progress: %d Retry-After=%q %s", w.Code, w.Header().Get("Retry-After"), w.Body)
			}
			h.clk.Advance(idempotency.StaleClaim + time.Second)
			if w := h.do(context.Background(), []string{"stuck"}, created); w.Code != 201 {
				t.Fatalf("after the claim went stale: %d %s", w.Code, w.Body)
			}
		})
		for name, key := range map[string][]string{
			"not UTF-8":        {"\xff\xfe"},
			"a control char":   {"a\tb"},
			"too long":         {strings.Repeat("k", 256)},
			"empty":            {""},
			"sent twice":       {"a", "b"},
			"non-ASCII letter": {"clé"},
		} {
			t.Run("the key is refused when "+name, func(t *testing.T) {
				h := newIdemHarness(t, db)
				w := h.do(context.Background(), key, created)
				if w.Code != 400 || !strings.Contains(w.Body.String(), `"invalid_idempotency_key"`) || !strings.Contains(w.Body.String(), `"param":"Idempotency-Key"`) {
					t.Fatalf("%d %s", w.Code, w.Body)
				}
				if h.calls.Load() != 0 {
					t.Fatal("the handler ran")
				}
			})
		}
		t.Run("a claim racing a release never reports another request", func(t *testing.T) {
			// Each worker claims and releases the same key with the same body; a
			// claim that collides with a row deleted before it is read must claim
			// again, not report "reused with a different request".
			svc := idempotency.NewService(store.NewIdempotency(db), clock.Real{})
			hash := idempotency.RequestHash(http.MethodPost, "/v1/race", nil)
			var wg sync.WaitGroup
			var reused atomic.Int32
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 100 {
						rec, err := svc.Begin(context.Background(), "key:race", "race", hash)
						switch {
						case err == nil && rec == nil:
							_ = svc.Release(context.Background(), "key:race", "race")
						case err != nil && strings.Contains(err.Error(), "idempotency_key_reused"):
							reused.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			if n := reused.Load(); n > 0 {
				t.Fatalf("%d claims reported a different request", n)
			}
		})
	})
}
