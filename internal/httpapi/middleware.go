package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
)

type ctxKey int

const (
	requestIDKey ctxKey = iota
	loggerKey
	routeKey
	problemsKey
)

// RequestID returns the id of the request in ctx.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// Logger returns the request's logger (with its request id), or the default.
func Logger(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

var ridEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "req_" + ridEncoding.EncodeToString(b[:])
}

// requestInfo is filled in by inner handlers for the access log and metrics:
// the matched route (metrics are labelled by pattern, not by raw path, which
// holds ids) and the calling account.
type requestInfo struct {
	route, userID string
	principal     *auth.Principal // the caller, for request analytics
	// secretFields are top-level fields of the response body that must not
	// be kept at rest (the idempotency record): a replay omits them.
	secretFields []string
}

func setRoute(ctx context.Context, pattern string) {
	if ri, ok := ctx.Value(routeKey).(*requestInfo); ok {
		ri.route = pattern
	}
}

// keepSecretOut marks fields of this response that hold a secret shown once.
func keepSecretOut(ctx context.Context, fields ...string) {
	if ri, ok := ctx.Value(routeKey).(*requestInfo); ok {
		ri.secretFields = append(ri.secretFields, fields...)
	}
}

func secretFieldsOf(ctx context.Context) []string {
	if ri, ok := ctx.Value(routeKey).(*requestInfo); ok {
		return ri.secretFields
	}
	return nil
}

// recorder remembers the status and size a handler wrote and, when tee is
// set, keeps a copy of the body (for idempotent replay).
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int
	tee    *bytes.Buffer
}

func (s *recorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *recorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	if s.tee != nil {
		s.tee.Write(b)
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += n
	return n, err
}

func (s *recorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "matchpoint_http_requests_total", Help: "HTTP requests by method, route and status.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "matchpoint_http_request_duration_seconds", Help: "HTTP request latency by method and route.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"method", "route"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

// observe is the outermost middleware: it gives every request an id (sent
// back as Request-Id), a logger, a problem builder, panic recovery, an access
// log line and metrics. The log line has the path but never the query or
// headers, which may carry credentials.
func (s *server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rid := newRequestID()
		w.Header().Set("Request-Id", rid)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if s.https {
			// Browsers must never fall back to plain http for this host.
			w.Header().Set("Strict-Transport-Security", "max-age=63072000; includeSubDomains")
		}
		log := s.log.With(slog.String("request_id", rid))
		ri := &requestInfo{}
		ctx := context.WithValue(r.Context(), requestIDKey, rid)
		ctx = context.WithValue(ctx, loggerKey, log)
		ctx = context.WithValue(ctx, routeKey, ri)
		ctx = context.WithValue(ctx, problemsKey, s.problems)
		r = r.WithContext(ctx)
		rec := &recorder{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				log.ErrorContext(ctx, "panic", slog.String("panic", fmt.Sprint(v)), slog.String("stack", string(debug.Stack())))
				if rec.status == 0 {
					s.problems.writeErr(rec, r, fmt.Errorf("panic: %v", v))
				}
			}
			if rec.status == 0 {
				rec.status = http.StatusOK
			}
			route := ri.route
			if route == "" {
				route = "unmatched"
			}
			elapsed := time.Since(start)
			s.metrics.requests.WithLabelValues(r.Method, route, strconv.Itoa(rec.status)).Inc()
			s.metrics.duration.WithLabelValues(r.Method, route).Observe(elapsed.Seconds())
			s.countRequest(ri, route, rec.status, elapsed)
			attrs := []slog.Attr{
				slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("route", route),
				slog.Int("status", rec.status), slog.Int("bytes", rec.bytes), slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
			}
			if ri.userID != "" {
				attrs = append(attrs, slog.String("user_id", ri.userID))
			}
			log.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
		}()
		next.ServeHTTP(rec, r)
	})
}

// route wraps a handler registered on the outer mux so metrics know its pattern.
func route(pattern string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setRoute(r.Context(), pattern)
		h.ServeHTTP(w, r)
	})
}

// limitBody caps request bodies at 1 MiB before anything reads them.
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		}
		next.ServeHTTP(w, r)
	})
}

// MaxBodyBytes is the request body limit of the API.
const MaxBodyBytes = 1 << 20

// errBodyTooLarge answers a body over MaxBodyBytes, whoever notices it.
var errBodyTooLarge = &apperr.Error{Kind: apperr.TooLarge, Code: "body_too_large", Message: "The request body is larger than 1 MiB."}
