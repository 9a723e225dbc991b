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
	"github.com/matchpoint-api/matchpoint/internal/messaging"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/stream"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// StreamOptions choose what `bench stream` measures.
type StreamOptions struct {
	DatabaseURL string // postgres://... (a fresh schema); empty: a temporary SQLite file
	Source      string // "messages" (sent over HTTP) or "notifications" (written through the centre)
	Clients     int    // connected streams, one account each
	Events      int    // events written per round
	Writers     int    // goroutines writing them (and, for messages, sending accounts)
	Rounds      int
}

// StreamResult is what `bench stream` measures.
type StreamResult struct {
	Engine  string `json:"engine"`
	Source  string `json:"source"`
	Clients int    `json:"clients"`
	Events  int    `json:"events_per_round"`
	// Rate is events per second from the first write to the last event
	// received over the streams, median round.
	Rate  float64 `json:"events_per_second"`
	P50MS float64 `json:"p50_ms"` // write started (the POST sent) -> received by its client
	P99MS float64 `json:"p99_ms"`
	// The stream's own share: the write returned (the POST's answer, or the
	// commit) -> received; 0 when the event arrived first.
	AfterWriteP50MS float64 `json:"after_write_p50_ms"`
	AfterWriteP99MS float64 `json:"after_write_p99_ms"`
	// The baseline: the same writes with one connected client receiving
	// every event, in the same process just before.
	BaselineRate  float64 `json:"baseline_events_per_second"`
	BaselineP50MS float64 `json:"baseline_p50_ms"`
	BaselineP99MS float64 `json:"baseline_p99_ms"`
	RateRatio     float64 `json:"rate_ratio"` // Rate / BaselineRate
	P99Ratio      float64 `json:"p99_ratio"`  // P99 / BaselineP99
	Dropped       uint64  `json:"dropped"`    // connections dropped as too slow (want 0)
}

// streamSource writes the events a round waits for, and recognises them.
type streamSource struct {
	// write writes event i (carrying tag+i) for client (of clients connected).
	write func(ctx context.Context, i, client, clients int, text string) error
	// text returns the tagged text of m, if m is the kind this source writes.
	text func(m stream.Message) (string, bool)
}

// Stream measures the real-time stream: events caused the way the product
// causes them (messages sent over HTTP, or notifications written through the
// centre, each putting its event on its recipient's stream in its own
// transaction) and received over GET /v1/stream by Clients connected
// accounts, against one connected account receiving them all.
func Stream(ctx context.Context, o StreamOptions, progress io.Writer) (*StreamResult, error) {
	e, err := startStream(ctx, o.DatabaseURL)
	if err != nil {
		return nil, err
	}
	defer e.close()
	res := &StreamResult{Engine: e.Engine, Source: o.Source, Clients: o.Clients, Events: o.Events}
	fmt.Fprintf(progress, "bench stream: %d accounts with a key each, %s (%s)\n", o.Clients, o.Source, e.Engine)
	accounts, err := seedAccounts(ctx, e, "reader", o.Clients, users.TierFree)
	if err != nil {
		return nil, err
	}
	keys := make([]string, o.Clients)
	for i, u := range accounts {
		if _, keys[i], err = e.app.Keys.Create(ctx, apikeys.Spec{UserID: u.ID, Name: "bench", Scopes: []string{"read"}}); err != nil {
			return nil, err
		}
	}
	var src *streamSource
	switch o.Source {
	case "messages":
		src, err = messageSource(ctx, e, o, accounts)
	case "notifications":
		src = notificationSource(e, accounts)
	default:
		err = fmt.Errorf("bench stream: --source is messages or notifications, not %q", o.Source)
	}
	if err != nil {
		return nil, err
	}

	base, err := streamRound(ctx, e, o, src, keys[:1], progress, "baseline, 1 client")
	if err != nil {
		return nil, err
	}
	res.BaselineRate, res.BaselineP50MS, res.BaselineP99MS = base.rate, ms(base.p50), ms(base.p99)
	var rates []float64
	var lat, after []time.Duration
	for r := range o.Rounds {
		st, err := streamRound(ctx, e, o, src, keys, progress, fmt.Sprintf("round %d, %d clients", r+1, o.Clients))
		if err != nil {
			return nil, err
		}
		rates = append(rates, st.rate)
		lat = append(lat, st.lat...)
		after = append(after, st.after...)
	}
	slices.Sort(lat)
	slices.Sort(after)
	res.AfterWriteP50MS, res.AfterWriteP99MS = ms(after[len(after)/2]), ms(after[len(after)*99/100])
	res.Rate = medianOf(rates)
	res.P50MS, res.P99MS = ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100])
	res.RateRatio, res.P99Ratio = res.Rate/res.BaselineRate, res.P99MS/res.BaselineP99MS
	res.Dropped = e.app.Stream.Stats().Dropped
	return res, nil
}

// seedAccounts writes n accounts without passwords in bulk.
func seedAccounts(ctx context.Context, e *env, prefix string, n int, tier string) ([]*users.User, error) {
	now := e.app.Clock.Now()
	accounts := make([]*users.User, n)
	for i := range accounts {
		accounts[i] = &users.User{ID: ids.New(ids.User), Email: fmt.Sprintf("%s%d@example.com", prefix, i), Username: fmt.Sprintf("%s%d", prefix, i),
			FirstName: fmt.Sprintf("%s%d", prefix, i), Timezone: "UTC", Privacy: users.DefaultPrivacy, Role: "member", Tier: tier,
			TravelRadiusKM: users.DefaultTravelRadiusKM, LocationSource: users.LocationNone, CreatedAt: now, UpdatedAt: now}
	}
	for i := 0; i < len(accounts); i += 5000 {
		if err := e.app.DB.SeedUsers(ctx, accounts[i:min(i+5000, len(accounts))], ""); err != nil {
			return nil, err
		}
	}
	return accounts, nil
}

// notificationSource writes one notification per event through the
// centre, in a transaction of its own.
func notificationSource(e *env, accounts []*users.User) *streamSource {
	return &streamSource{
		write: func(ctx context.Context, i, client, _ int, text string) error {
			n := notify.New(e.app.Clock.Now(), accounts[client].ID, notify.KindEventReminder, text, "", nil)
			return e.app.NotificationStore.AddNotifications(ctx, []*notify.Notification{n})
		},
		text: func(m stream.Message) (string, bool) {
			var n struct{ Title string }
			if m.Event != stream.KindNotification || json.Unmarshal([]byte(m.Data), &n) != nil {
				return "", false
			}
			return n.Title, true
		},
	}
}

// messageSource sends each event as a message over HTTP: Writers sending
// accounts, each in a direct conversation with the readers it writes to
// (reader c with sender c mod Writers; the lone baseline reader with every
// sender, so that both configurations spread the sends alike).
func messageSource(ctx context.Context, e *env, o StreamOptions, readers []*users.User) (*streamSource, error) {
	// Enterprise accounts: the bench sends more than a free hour's allowance.
	senders, err := seedAccounts(ctx, e, "sender", o.Writers, users.TierEnterprise)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(senders))
	for i, u := range senders {
		if _, keys[i], err = e.app.Keys.Create(ctx, apikeys.Spec{UserID: u.ID, Name: "bench", Scopes: []string{"read", "write"}}); err != nil {
			return nil, err
		}
	}
	direct := func(sender, reader *users.User) (string, error) {
		c, _, err := e.app.Messaging.Create(ctx, sender.ID, []string{reader.ID}, nil)
		if err != nil {
			return "", err
		}
		return c.ID, nil
	}
	convOf := make([]string, len(readers)) // reader c's conversation with sender c mod Writers
	for c, r := range readers {
		if convOf[c], err = direct(senders[c%len(senders)], r); err != nil {
			return nil, err
		}
	}
	alone := make([]string, len(senders)) // the baseline reader's conversation with each sender
	for w, s := range senders {
		if alone[w], err = direct(s, readers[0]); err != nil {
			return nil, err
		}
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: o.Writers}}
	return &streamSource{
		write: func(ctx context.Context, i, c, clients int, text string) error {
			w, conv := c%len(senders), convOf[c]
			if clients == 1 {
				w, conv = i%len(senders), alone[i%len(senders)]
			}
			body, _ := json.Marshal(map[string]string{"body": text})
			if !send(client, http.MethodPost, e.url+"/v1/conversations/"+conv+"/messages", keys[w], string(body), http.StatusCreated) {
				return errors.New("bench stream: sending a message failed")
			}
			return nil
		},
		text: func(m stream.Message) (string, bool) {
			var d struct{ Message messaging.View }
			if m.Event != messaging.StreamSent || json.Unmarshal([]byte(m.Data), &d) != nil || d.Message.Body == nil {
				return "", false
			}
			return *d.Message.Body, true
		},
	}, nil
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
	after    []time.Duration // the write returned -> received
}

// streamRound connects one stream per key, writes o.Events events round
// robin over their accounts from o.Writers goroutines, and waits until
// every one has been received by its client.
func streamRound(ctx context.Context, e *env, o StreamOptions, src *streamSource, keys []string, progress io.Writer, name string) (*streamStats, error) {
	started := make([]atomic.Int64, o.Events) // unix ns when the write of event i began
	wrote := make([]atomic.Int64, o.Events)   // and when it returned
	lat := make([]time.Duration, o.Events)
	got := make([]int64, o.Events) // unix ns when received
	var received, bad atomic.Int64
	done := make(chan struct{})
	tag := strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
	on := func(client int, m stream.Message) {
		at := time.Now()
		text, ok := src.text(m)
		if !ok {
			return // another kind (a message's notification)
		}
		i, err := strconv.Atoi(strings.TrimPrefix(text, tag))
		if !strings.HasPrefix(text, tag) || err != nil || i < 0 || i >= o.Events || i%len(keys) != client {
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
				started[i].Store(time.Now().UnixNano())
				if err := src.write(ctx, i, i%len(keys), len(keys), tag+strconv.Itoa(i)); err != nil {
					errc <- err
					return
				}
				wrote[i].Store(time.Now().UnixNano())
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
		st.after = append(st.after, time.Duration(max(0, got[i]-wrote[i].Load())))
	}
	st.p50, st.p99 = st.lat[len(st.lat)/2], st.lat[len(st.lat)*99/100]
	fmt.Fprintf(progress, "bench stream: %s: %d events in %v (%.0f/s), p50 %.1f ms, p99 %.1f ms\n",
		name, o.Events, elapsed.Round(time.Millisecond), st.rate, ms(st.p50), ms(st.p99))
	return st, nil
}
