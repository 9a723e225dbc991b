package bench

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/stream"
)

// Streams are clients of GET /v1/stream, one per credential, each on a
// connection of its own, as apps are: what the stream benches (and the
// messaging bench's send-to-receive latency) read deliveries with.
type Streams struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	ended  atomic.Int64 // streams that ended before Close
	events atomic.Int64
}

// OpenStreams connects one stream per key to the service at base and calls
// on (from the streams' goroutines, concurrently) with the index of the key
// and each event it receives; heartbeats are not passed on. It returns once
// every stream is open, so that what is written next reaches all of them.
func OpenStreams(ctx context.Context, base string, keys []string, on func(i int, m stream.Message)) (*Streams, error) {
	sctx, cancel := context.WithCancel(ctx)
	s := &Streams{cancel: cancel}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: -1, DisableCompression: true, ResponseHeaderTimeout: 30 * time.Second}}
	open := make(chan error, len(keys))
	sem := make(chan struct{}, 64) // connect at most this many at once
	for i, key := range keys {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			sem <- struct{}{}
			req, _ := http.NewRequestWithContext(sctx, http.MethodGet, base+"/v1/stream", nil)
			req.Header.Set("Authorization", "Bearer "+key)
			res, err := client.Do(req)
			<-sem
			if err != nil {
				open <- err
				return
			}
			defer res.Body.Close()
			if res.StatusCode != http.StatusOK {
				open <- fmt.Errorf("bench: stream %d answered %d", i, res.StatusCode)
				return
			}
			first := true
			_ = stream.Read(res.Body, func(m stream.Message) error {
				if first {
					first = false
					open <- nil // the opening comment: registered with the hub
				}
				if !m.Comment {
					s.events.Add(1)
					on(i, m)
				}
				return nil
			})
			if first {
				open <- fmt.Errorf("bench: stream %d ended before its first line", i)
				return
			}
			if sctx.Err() == nil {
				s.ended.Add(1)
			}
		}()
	}
	for range keys {
		if err := <-open; err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// Events is how many events the streams received.
func (s *Streams) Events() int64 { return s.events.Load() }

// Ended is how many streams the service ended before Close (dropped as too
// slow, or the service stopping).
func (s *Streams) Ended() int64 { return s.ended.Load() }

// Close disconnects every stream and waits for their goroutines.
func (s *Streams) Close() {
	s.cancel()
	s.wg.Wait()
}
