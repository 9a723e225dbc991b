package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// APIResult compares GET /v1/users/me with a bare handler serving the same
// bytes from the same process: the ratio is what the service's own work
// (authentication, database, routing, encoding) costs.
type APIResult struct {
	Engine string
	Bare   []Stats
	Me     []Stats
}

// Best returns the best round of each.
func (r APIResult) Best() (bare, me Stats) {
	bare, me = r.Bare[0], r.Me[0]
	for _, s := range r.Bare {
		if s.Rate() > bare.Rate() {
			bare = s
		}
	}
	for _, s := range r.Me {
		if s.Rate() > me.Rate() {
			me = s
		}
	}
	return bare, me
}

// API runs the comparison, interleaving rounds so that both configurations
// see the same machine.
func API(ctx context.Context, o Options, out io.Writer) (*APIResult, error) {
	e, err := start(ctx, o)
	if err != nil {
		return nil, err
	}
	defer e.close()
	code, err := e.code(ctx)
	if err != nil {
		return nil, err
	}
	set, err := e.app.OAuth.ExchangeCode(ctx, e.client, code, e.client.RedirectURIs[0], "")
	if err != nil {
		return nil, err
	}
	c := newHTTPClient(o.Concurrency)
	meURL := e.url + "/v1/users/me"

	// The baseline serves the very body the real endpoint returns.
	req, _ := http.NewRequest(http.MethodGet, meURL, nil)
	req.Header.Set("Authorization", "Bearer "+set.AccessToken)
	res, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !json.Valid(body) {
		return nil, fmt.Errorf("bench: GET /v1/users/me answered %d", res.StatusCode)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	bare := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})}
	go bare.Serve(ln)
	defer bare.Close()
	bareURL := "http://" + ln.Addr().String() + "/v1/users/me"

	result := &APIResult{Engine: e.Engine}
	fmt.Fprintf(out, "bench api: %s, concurrency %d, %d rounds of %s each, interleaved\n", e.Engine, o.Concurrency, o.Rounds, o.Duration)
	warm := func(u, tok string) {
		run("warm-up", o.Concurrency, 300*time.Millisecond, func(int) (bool, bool) { return get(c, u, tok), true })
	}
	warm(bareURL, "")
	warm(meURL, set.AccessToken)
	for i := 0; i < o.Rounds; i++ {
		b := run("bare handler, same JSON", o.Concurrency, o.Duration, func(int) (bool, bool) { return get(c, bareURL, ""), true })
		m := run("GET /v1/users/me (bearer token)", o.Concurrency, o.Duration, func(int) (bool, bool) { return get(c, meURL, set.AccessToken), true })
		fmt.Fprintf(out, "  round %d\n    %s\n    %s\n", i+1, b, m)
		result.Bare, result.Me = append(result.Bare, b), append(result.Me, m)
	}
	bb, bm := result.Best()
	fmt.Fprintf(out, "  best: bare %.0f req/s, /v1/users/me %.0f req/s, ratio %.2f (the API serves %.0f%% of the bare handler's rate)\n",
		bb.Rate(), bm.Rate(), bm.Rate()/bb.Rate(), 100*bm.Rate()/bb.Rate())
	return result, nil
}
