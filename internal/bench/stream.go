package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/stream"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// StreamOptions choose what `bench stream` measures.
type StreamOptions struct {
	DatabaseURL string // postgres://... (a fresh schema); empty: a temporary SQLite file
	Clients     int    // connected streams, one account each
	Events      int    // notifications written per round
	Writers     int    // goroutines writing them, one transaction each
	Rounds      int
}

// StreamResult is what `bench stream` measures.
type StreamResult struct {
	Engine  string `json:"engine"`
	Clients int    `json:"clients"`
	Events  int    `json:"events_per_round"`
	// Rate is events per second from the first write to the last event
	// received over the streams, median round.
	Rate  float64 `json:"events_per_second"`
	P50MS float64 `json:"p50_ms"` // write started -> received by its client
	P99MS float64 `json:"p99_ms"`
	// The stream's own share: the write's commit returned -> received
	// (0 when the event arrived before the writer saw its commit return).
	AfterCommitP50MS float64 `json:"after_commit_p50_ms"`
	AfterCommitP99MS float64 `json:"after_commit_p99_ms"`
	// The baseline: the same writes with one connected client receiving
	// every event, in the same process just before.
	BaselineRate  float64 `json:"baseline_events_per_second"`
	BaselineP50MS float64 `json:"baseline_p50_ms"`
	BaselineP99MS float64 `json:"baseline_p99_ms"`
	RateRatio     float64 `json:"rate_ratio"` // Rate / BaselineRate
	P99Ratio      float64 `json:"p99_ratio"`  // P99 / BaselineP99
	Dropped       uint64  `json:"dropped"`    // connections dropped as too slow (want 0)
}

// Stream measures the real-time stream: notifications written through the
// notification centre (which puts each on its owner's stream in the same
// transaction) and received over GET /v1/stream by Clients connected
// accounts, against one connected account receiving them all.
func Stream(ctx context.Context, o StreamOptions, progress io.Writer) (*StreamResult, error) {
	e, err := startStream(ctx, o.DatabaseURL)
	if err != nil {
		return nil, err
	}
	defer e.close()
	res := &StreamResult{Engine: e.Engine, Clients: o.Clients, Events: o.Events}
	fmt.Fprintf(progress, "bench stream: %d accounts with a key each (%s)\n", o.Clients, e.Engine)
	now := e.app.Clock.Now()
	accounts := make([]*users.User, o.Clients)
	for i := range accounts {
		accounts[i] = &users.User{ID: ids.New(ids.User), Email: fmt.Sprintf("reader%d@example.com", i), Username: fmt.Sprintf("reader%d", i),
			Timezone: "UTC", Privacy: users.DefaultPrivacy, Role: "member", Tier: users.TierFree, TravelRadiusKM: users.DefaultTravelRadiusKM,
			LocationSource: users.LocationNone, CreatedAt: now, UpdatedAt: now}
	}
	for i := 0; i < len(accounts); i += 5000 {
		if err := e.app.DB.SeedUsers(ctx, accounts[i:min(i+5000, len(accounts))], ""); err != nil {
			return nil, err
		}
	}
	keys := make([]string, o.Clients)
	for i, u := range accounts {
		if _, keys[i], err = e.app.Keys.Create(ctx, apikeys.Spec{UserID: u.ID, Name: "bench", Scopes: []string{"read"}}); err != nil {
			return nil, err
		}
	}

	base, err := streamRound(ctx, e, o, accounts[:1], keys[:1], progress, "baseline, 1 client")
	if err != nil {
		return nil, err
	}
	res.BaselineRate, res.BaselineP50MS, res.BaselineP99MS = base.rate, ms(base.p50), ms(base.p99)
	var rates []float64
	var lat, after []time.Duration
	for r := range o.Rounds {
		st, err := streamRound(ctx, e, o, accounts, keys, progress, fmt.Sprintf("round %d, %d clients", r+1, o.Clients))
		if err != nil {
			return nil, err
		}
		rates = append(rates, st.rate)
		lat = append(lat, st.lat...)
		after = append(after, st.after...)
	}
	slices.Sort(lat)
	slices.Sort(after)
	res.AfterCommitP50MS, res.AfterCommitP99MS = ms(after[len(after)/2]), ms(after[len(after)*99/100])
	res.Rate = medianOf(rates)
	res.P50MS, res.P99MS = ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100])
	res.RateRatio, res.P99Ratio = res.Rate/res.BaselineRate, res.P99MS/res.BaselineP99MS
	res.Dropped = e.app.Stream.Stats().Dropped
	return res, nil
}

// startStream serves the service on loopback over a throwaway database.
func startStream(ctx context.Context, dbURL string) (*env, error) {
	e := &env{Engine: "sqlite"}
	if dbURL == "" {
		dir, err := os.MkdirTemp("", "matchpoint-bench-")
		if err != nil {
			return nil, err
		}
		e.cleanup = append(e.cleanup, func() { os.RemoveAll(dir) })
		dbURL = "sqlite:" + filepath.Join(dir, "bench.db")
	} else {
		u, drop, err := freshSchema(dbURL)
		if err != nil {
			return nil, err
		}
		e.cleanup = append(e.cleanup, drop)
		dbURL, e.Engine = u, "postgres"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.close()
		return nil, err
	}
	e.url = "http://" + ln.Addr().String()
	a, err := app.Open(ctx, config.Config{DatabaseURL: dbURL, BaseURL: e.url, DocsURL: e.url + "/docs/errors"},
		app.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		ln.Close()
		e.close()
		return nil, err
	}
	e.app = a
	e.cleanup = append(e.cleanup, func() { a.Close() })
	e.srv = &http.Server{Handler: a.Handler}
	e.srv.RegisterOnShutdown(a.StopStream)
	go e.srv.Serve(ln)
	e.cleanup = append(e.cleanup, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.srv.Shutdown(sctx)
	})
	return e, nil
}

type streamStats struct {
	rate     float64
	p50, p99 time.Duration
	lat      []time.Duration
	after    []time.Duration // commit returned -> received
}

// streamRound connects one stream per key, writes o.Events notifications
// round robin over accounts from o.Writers goroutines, and waits until
// every one has been received.
func streamRound(ctx context.Context, e *env, o StreamOptions, accounts []*users.User, keys []string, progress io.Writer, name string) (*streamStats, error) {
	started := make([]atomic.Int64, o.Events)   // unix ns when the write of event i began
	committed := make([]atomic.Int64, o.Events) // unix ns when it returned
	lat := make([]time.Duration, o.Events)
	got := make([]int64, o.Events) // unix ns when received
	var received atomic.Int64
	var bad atomic.Int64
	done := make(chan struct{})
	tag := strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
	on := func(client int, m stream.Message) {
		at := time.Now()
		var n struct{ Title string }
		if m.Event != stream.KindNotification || json.Unmarshal([]byte(m.Data), &n) != nil || !strings.HasPrefix(n.Title, tag) {
			bad.Add(1)
			return
		}
		i, err := strconv.Atoi(strings.TrimPrefix(n.Title, tag))
		if err != nil || i < 0 || i >= o.Events || i%len(accounts) != client {
			bad.Add(1) // not this round's, or someone else's
			return
		}
		lat[i], got[i] = at.Sub(time.Unix(0, started[i].Load())), at.UnixNano()
		if received.Add(1) == int64(o.Events) {
			close(done)
		}
	}
	streams, err := OpenStreams(ctx, e.url, keys, on)
	if err != nil {
		return nil, err
	}
	defer streams.Close()

	begin := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, o.Writers)
	for range o.Writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= o.Events {
					return
				}
				n := notify.New(e.app.Clock.Now(), accounts[i%len(accounts)].ID, notify.KindEventReminder, tag+strconv.Itoa(i), "", nil)
				started[i].Store(time.Now().UnixNano())
				if err := e.app.NotificationStore.AddNotifications(ctx, []*notify.Notification{n}); err != nil {
					errc <- err
					return
				}
				committed[i].Store(time.Now().UnixNano())
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return nil, err
	}
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		return nil, fmt.Errorf("bench stream: %s: %d of %d events received in 2 minutes (%d connections ended)",
			name, received.Load(), o.Events, streams.Ended())
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	elapsed := time.Since(begin)
	if n := bad.Load(); n > 0 {
		return nil, errors.New("bench stream: " + strconv.FormatInt(n, 10) + " events reached a client they were not written for")
	}
	st := &streamStats{rate: float64(o.Events) / elapsed.Seconds(), lat: slices.Clone(lat)}
	slices.Sort(st.lat)
	for i := range got {
		st.after = append(st.after, time.Duration(max(0, got[i]-committed[i].Load())))
	}
	st.p50, st.p99 = st.lat[len(st.lat)/2], st.lat[len(st.lat)*99/100]
	fmt.Fprintf(progress, "bench stream: %s: %d events in %v (%.0f/s), p50 %.1f ms, p99 %.1f ms\n",
		name, o.Events, elapsed.Round(time.Millisecond), st.rate, ms(st.p50), ms(st.p99))
	return st, nil
}
