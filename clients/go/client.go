// Package matchpoint is the Go client of the Matchpoint API: one method per
// operation of the service's OpenAPI document (operations_gen.go, types in
// types_gen.go, both written by clients/gen), over a hand-written core
// (this file): credentials, timeouts, retries with backoff that honour
// Retry-After, an Idempotency-Key on every POST, typed errors, OAuth with
// PKCE and refresh (oauth.go), webhook verification (webhook.go).
//
//	c := matchpoint.NewClient("https://api.matchpoint.example", matchpoint.WithAPIKey(key))
//	me, err := c.GetMe(ctx)
//
// It uses the standard library only.
package matchpoint

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Version is this library's version, sent in the User-Agent.
const Version = "0.1.0"

// Client calls the API. It is safe for concurrent use.
type Client struct {
	baseURL    string
	httpClient *http.Client
	apiKey     string
	oauth      *tokenSource
	maxRetries int
	timeout    time.Duration
	userAgent  string
	// sleep waits between attempts; tests may shorten it.
	sleep func(ctx context.Context, d time.Duration) error
}

// Option configures a Client.
type Option func(*Client)

// WithAPIKey authenticates every request with an API key.
func WithAPIKey(key string) Option { return func(c *Client) { c.apiKey = key } }

// WithAccessToken authenticates with an OAuth access token that is never
// refreshed (see WithOAuth for one that is).
func WithAccessToken(token string) Option {
	return func(c *Client) { c.oauth = &tokenSource{tokens: TokenSet{AccessToken: token}} }
}

// WithHTTPClient sets the HTTP client (default: a new one).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.httpClient = h } }

// WithMaxRetries sets how many times a request is retried (default 2).
func WithMaxRetries(n int) Option { return func(c *Client) { c.maxRetries = n } }

// WithTimeout bounds each attempt (default 60 s).
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// NewClient returns a client of the API at baseURL.
func NewClient(baseURL string, opts ...Option) *Client {
	c := &Client{
		baseURL:    strings.TrimRight(baseURL, "/"),
		httpClient: &http.Client{},
		maxRetries: 2,
		timeout:    60 * time.Second,
		userAgent:  "matchpoint-go/" + Version,
		sleep:      sleepCtx,
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// RequestOption changes one call.
type RequestOption func(*callOptions)

type callOptions struct {
	header         http.Header
	idempotencyKey string
	maxRetries     *int
	timeout        time.Duration
}

// WithHeader adds a header to the request.
func WithHeader(key, value string) RequestOption {
	return func(o *callOptions) { o.header.Add(key, value) }
}

// WithIdempotencyKey sets the Idempotency-Key of a POST (default: a new
// random key, reused across the call's retries).
func WithIdempotencyKey(key string) RequestOption {
	return func(o *callOptions) { o.idempotencyKey = key }
}

// WithRequestMaxRetries overrides the client's retries for one call.
func WithRequestMaxRetries(n int) RequestOption { return func(o *callOptions) { o.maxRetries = &n } }

// WithRequestTimeout overrides the client's timeout for one call.
func WithRequestTimeout(d time.Duration) RequestOption { return func(o *callOptions) { o.timeout = d } }

type request struct {
	method, path string
	query        url.Values
	header       http.Header
	body         any
	form         bool
	auth         bool
}

func (c *Client) url(path string, q url.Values) string {
	u := c.baseURL + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// do sends r, retrying as the API allows, and decodes a JSON answer into
// out (a *string receives the body as text; nil discards it).
func (c *Client) do(ctx context.Context, r request, out any, opts []RequestOption) error {
	res, err := c.send(ctx, r, opts)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return &ConnectionError{Err: err}
	}
	switch o := out.(type) {
	case nil:
		return nil
	case *string:
		*o = string(body)
		return nil
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("matchpoint: decoding the answer of %s %s: %w", r.method, r.path, err)
	}
	return nil
}

// stream sends r and returns the open answer.
func (c *Client) stream(ctx context.Context, r request, opts []RequestOption) (*http.Response, error) {
	opts = append(opts, WithRequestTimeout(-1))
	return c.send(ctx, r, opts)
}

// send runs the attempts of one call and returns a 2xx answer, or the error
// of the last attempt.
func (c *Client) send(ctx context.Context, r request, opts []RequestOption) (*http.Response, error) {
	co := callOptions{header: http.Header{}, timeout: c.timeout}
	for _, o := range opts {
		o(&co)
	}
	retries := c.maxRetries
	if co.maxRetries != nil {
		retries = *co.maxRetries
	}
	var payload []byte
	contentType := ""
	if r.body != nil {
		var err error
		if r.form {
			payload, err = formBody(r.body)
			contentType = "application/x-www-form-urlencoded"
		} else {
			payload, err = json.Marshal(r.body)
			contentType = "application/json"
		}
		if err != nil {
			return nil, fmt.Errorf("matchpoint: encoding the body of %s %s: %w", r.method, r.path, err)
		}
	}
	if r.method == http.MethodPost && co.idempotencyKey == "" {
		co.idempotencyKey = newIdempotencyKey()
	}
	refreshed := false
	for attempt := 0; ; attempt++ {
		res, sent, err := c.attempt(ctx, r, co, payload, contentType)
		if err == nil && res.StatusCode < 300 {
			return res, nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if attempt >= retries {
				return nil, err
			}
			if err := c.sleep(ctx, backoff(attempt, nil)); err != nil {
				return nil, err
			}
			continue
		}
		apiErr := readError(res)
		// An expired or revoked access token: refresh once and try again.
		if res.StatusCode == http.StatusUnauthorized && r.auth && c.oauth != nil && c.oauth.canRefresh() && !refreshed {
			refreshed = true
			if rerr := c.oauth.refresh(ctx, c, sent); rerr != nil {
				return nil, rerr
			}
			attempt--
			continue
		}
		if attempt >= retries || !retryable(apiErr) {
			return nil, apiErr
		}
		if err := c.sleep(ctx, backoff(attempt, res.Header)); err != nil {
			return nil, err
		}
	}
}

// attempt sends one request; it returns the access token it sent, if any.
func (c *Client) attempt(ctx context.Context, r request, co callOptions, payload []byte, contentType string) (res *http.Response, token string, err error) {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if co.timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, co.timeout)
	}
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(actx, r.method, c.url(r.path, r.query), body)
	if err != nil {
		cancel()
		return nil, "", err
	}
	req.Header.Set("User-Agent", c.userAgent)
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if co.idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", co.idempotencyKey)
	}
	if r.auth {
		switch {
		case c.oauth != nil:
			token, err = c.oauth.token(ctx, c)
			if err != nil {
				cancel()
				return nil, "", err
			}
			req.Header.Set("Authorization", "Bearer "+token)
		case c.apiKey != "":
			req.Header.Set("Authorization", "Bearer "+c.apiKey)
		}
	}
	for k, vs := range r.header {
		req.Header[k] = vs
	}
	for k, vs := range co.header {
		req.Header[k] = vs
	}
	res, err = c.httpClient.Do(req)
	if err != nil {
		cancel()
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, "", &ConnectionError{Err: err, Timeout: true}
		}
		return nil, "", &ConnectionError{Err: err}
	}
	res.Body = cancelOnClose{res.Body, cancel}
	return res, token, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// retryable says whether an error answer may succeed later: a timeout, a
// request with the same Idempotency-Key still running, too many requests,
// or a server error.
func retryable(e *Error) bool {
	switch {
	case e.Status == http.StatusRequestTimeout, e.Status == http.StatusTooManyRequests, e.Status >= 500:
		return true
	case e.Status == http.StatusConflict:
		return e.Code == "idempotency_in_progress"
	}
	return false
}

// maxRetryAfter bounds how long a Retry-After may make a call wait.
const maxRetryAfter = 60 * time.Second

// backoff is the wait before the retry after attempt: the answer's
// Retry-After when it gives one, else 0.5 s doubling up to 8 s, with up to
// a quarter taken off at random so that clients do not retry together.
func backoff(attempt int, h http.Header) time.Duration {
	if h != nil {
		if d, ok := retryAfter(h.Get("Retry-After")); ok {
			return min(d, maxRetryAfter)
		}
	}
	d := time.Duration(float64(500*time.Millisecond) * math.Pow(2, float64(attempt)))
	d = min(d, 8*time.Second)
	return d - time.Duration(mrand.Float64()*0.25*float64(d))
}

func retryAfter(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func newIdempotencyKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// formBody encodes a request type as a form: its JSON fields as strings.
func formBody(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	q := url.Values{}
	for k, v := range fields {
		switch x := v.(type) {
		case nil:
		case string:
			q.Set(k, x)
		default:
			b, _ := json.Marshal(x)
			q.Set(k, string(b))
		}
	}
	return []byte(q.Encode()), nil
}

// addParam adds a query or header parameter when it is set.
func addParam(add func(key, value string), key string, v any) {
	switch x := v.(type) {
	case *string:
		if x != nil {
			add(key, *x)
		}
	case string:
		if x != "" {
			add(key, x)
		}
	case *int64:
		if x != nil {
			add(key, strconv.FormatInt(*x, 10))
		}
	case *float64:
		if x != nil {
			add(key, strconv.FormatFloat(*x, 'f', -1, 64))
		}
	case *bool:
		if x != nil {
			add(key, strconv.FormatBool(*x))
		}
	case *time.Time:
		if x != nil {
			add(key, x.UTC().Format(time.RFC3339Nano))
		}
	case []string:
		for _, s := range x {
			add(key, s)
		}
	default:
		panic(fmt.Sprintf("matchpoint: parameter %s of unsupported type %T", key, v))
	}
}

// Ptr returns a pointer to v, for the optional fields of request types.
func Ptr[T any](v T) *T { return &v }

// String returns a pointer to s.
func String(s string) *string { return &s }

// Int returns a pointer to n.
func Int(n int64) *int64 { return &n }

// Float returns a pointer to f.
func Float(f float64) *float64 { return &f }

// Bool returns a pointer to b.
func Bool(b bool) *bool { return &b }
