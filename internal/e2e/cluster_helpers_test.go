package e2e

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
)

// loadReply is one response of a load generator: what status, which headers,
// or the transport error when there was no response.
type loadReply struct {
	node   int
	status int
	header http.Header
	body   []byte
	err    error
	at     time.Time
}

// clusterClient calls the nodes of a cluster from many goroutines at once;
// unlike nodeAPI it reports a failed exchange instead of failing the test,
// since a node going away is what some tests are about.
var clusterClient = &http.Client{Timeout: 30 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}}

func call(base, method, path, token, body string) loadReply {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, r)
	if err != nil {
		return loadReply{err: err}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := clusterClient.Do(req)
	if err != nil {
		return loadReply{err: err, at: time.Now()}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return loadReply{status: res.StatusCode, header: res.Header, body: b, err: err, at: time.Now()}
}

// roundRobin sends n requests (n < 0: until stop is closed) from workers
// goroutines, the i-th to node i mod len(urls), and returns every reply.
func roundRobin(urls []string, n, workers int, stop <-chan struct{}, send func(i int, base string) loadReply) []loadReply {
	var (
		mu   sync.Mutex
		next int
		out  []loadReply
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if n >= 0 && i >= n {
					return
				}
				a := send(i, urls[i%len(urls)])
				a.node = i % len(urls)
				mu.Lock()
				out = append(out, a)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out
}

// urlsOf lists the addresses of a cluster's nodes.
func urlsOf(c *apptest.Cluster) []string {
	var out []string
	for _, n := range c.Nodes {
		out = append(out, n.URL)
	}
	return out
}
