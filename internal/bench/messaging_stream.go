package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/messaging"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/stream"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// MessagingStream is the send-to-receive latency over GET /v1/stream.
type MessagingStream struct {
	Clients  int `json:"clients"`       // connected streams, one account each
	Groups   int `json:"conversations"` // groups of up to 100 of them
	Messages int `json:"messages"`      // sent per configuration, over HTTP
	Writers  int `json:"writers"`       // clients sending them, each waiting for its answer
	// Deliveries are message.sent events received (messages x members).
	Deliveries int     `json:"deliveries"`
	P50MS      float64 `json:"p50_ms"` // POST started -> received by a member's stream
	P99MS      float64 `json:"p99_ms"`
	// The stream's own share: the POST answered (its transaction committed)
	// -> received; 0 when the event arrived before the answer.
	AfterAnswerP50MS float64 `json:"after_answer_p50_ms"`
	AfterAnswerP99MS float64 `json:"after_answer_p99_ms"`
	// The baseline: the same sends in a direct conversation of two
	// connected accounts, in the same process just before.
	BaselineP50MS float64 `json:"baseline_p50_ms"`
	BaselineP99MS float64 `json:"baseline_p99_ms"`
	P99Ratio      float64 `json:"p99_ratio"`
	Dropped       uint64  `json:"dropped"` // connections dropped as too slow (want 0)
	// Lost are deliveries that never came (want 0): the stream gives up
	// waiting for a sequence number whose transaction commits more than
	// its gap grace after a later one did, and live clients miss it.
	Lost        int    `json:"lost"`
	GapsSkipped uint64 `json:"gaps_skipped"`
}

// messagingStream connects n accounts' streams, puts them in groups of 100
// and sends messages to the groups over HTTP from writers (closed-loop
// clients: with one per core the service is busy, not saturated; each one
// more adds queueing to every latency), timing
// each message from the start of its POST to its arrival on every member's
// stream; the baseline is a direct conversation of two connected accounts.
func messagingStream(ctx context.Context, e *env, n, messages, writers int, progress io.Writer) (*MessagingStream, error) {
	now := e.app.Clock.Now()
	accounts := make([]*users.User, n)
	for i := range accounts {
		accounts[i] = &users.User{ID: ids.New(ids.User), Email: fmt.Sprintf("member%d@example.com", i), Username: fmt.Sprintf("member%d", i),
			FirstName: "Member", Timezone: "UTC", Privacy: users.DefaultPrivacy, Role: auth.RoleMember, Tier: users.TierEnterprise,
			TravelRadiusKM: users.DefaultTravelRadiusKM, LocationSource: users.LocationNone, CreatedAt: now, UpdatedAt: now}
	}
	for i := 0; i < n; i += 5000 {
		if err := e.app.DB.SeedUsers(ctx, accounts[i:min(i+5000, n)], ""); err != nil {
			return nil, err
		}
	}
	keys := make([]string, n)
	for i, u := range accounts {
		var err error
		if _, keys[i], err = e.app.Keys.Create(ctx, apikeys.Spec{UserID: u.ID, Name: "bench", Scopes: []string{auth.ScopeRead, auth.ScopeWrite}}); err != nil {
			return nil, err
		}
	}
	var groups []store.SeedConversation
	for i := 0; i < n; i += messaging.MaxMembers {
		g := store.SeedConversation{ID: ids.New(ids.Conversation)}
		for _, u := range accounts[i:min(i+messaging.MaxMembers, n)] {
			g.Members = append(g.Members, u.ID)
		}
		groups = append(groups, g)
	}
	direct := store.SeedConversation{ID: ids.New(ids.Conversation), Members: []string{accounts[0].ID, accounts[1].ID}}
	if err := store.SeedMessaging(ctx, e.app.DB, append(groups, direct), 0, nil, now); err != nil {
		return nil, err
	}
	res := &MessagingStream{Clients: n, Groups: len(groups), Messages: messages, Writers: writers}
	fmt.Fprintf(progress, "bench messaging: stream latency, baseline: a direct conversation of 2 connected accounts\n")
	base, _, _, err := streamSends(ctx, e, keys[:2], []store.SeedConversation{direct}, 0, messages, writers)
	if err != nil {
		return nil, err
	}
	res.BaselineP50MS, res.BaselineP99MS = ms(base[len(base)/2]), ms(base[len(base)*99/100])
	fmt.Fprintf(progress, "bench messaging: stream latency, %d connected accounts in %d groups, %d writers\n", n, len(groups), writers)
	lat, after, lost, err := streamSends(ctx, e, keys, groups, messaging.MaxMembers, messages, writers)
	if err != nil {
		return nil, err
	}
	res.Lost = lost
	res.Deliveries = len(lat)
	res.AfterAnswerP50MS, res.AfterAnswerP99MS = ms(after[len(after)/2]), ms(after[len(after)*99/100])
	res.P50MS, res.P99MS = ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100])
	res.P99Ratio = res.P99MS / res.BaselineP99MS
	res.Dropped, res.GapsSkipped = e.app.Stream.Stats().Dropped, e.app.Stream.Stats().GapsSkipped
	fmt.Fprintf(progress, "bench messaging: stream latency p50 %.1f ms p99 %.1f ms over %d deliveries (baseline p50 %.1f ms p99 %.1f ms)\n",
		res.P50MS, res.P99MS, res.Deliveries, res.BaselineP50MS, res.BaselineP99MS)
	return res, nil
}

// streamSends opens a stream per key, sends messages round robin over the
// conversations (each by its first member; keys are in the order of the
// conversations' members, size of them per conversation, or all of them
// when size is 0) and returns every delivery's latency from the start of
// its POST, and from its answer, each sorted.
func streamSends(ctx context.Context, e *env, keys []string, convs []store.SeedConversation, size, messages, writers int) (lat, after []time.Duration, lost int, err error) {
	want := 0
	for i := range messages {
		want += len(convs[i%len(convs)].Members)
	}
	var mu sync.Mutex
	started := map[string]time.Time{}  // message id -> POST started
	answered := map[string]time.Time{} // message id -> POST answered
	var got atomic.Int64
	done := make(chan struct{})
	type delivery struct {
		id string
		at time.Time
	}
	var received []delivery
	on := func(_ int, m stream.Message) {
		at := time.Now()
		if m.Event != messaging.StreamSent {
			return // notifications of the same messages, and the rest
		}
		var d struct {
			Message struct{ ID string } `json:"message"`
		}
		if json.Unmarshal([]byte(m.Data), &d) != nil {
			return
		}
		mu.Lock()
		received = append(received, delivery{d.Message.ID, at})
		mu.Unlock()
		if got.Add(1) == int64(want) {
			close(done)
		}
	}
	streams, err := OpenStreams(ctx, e.url, keys, on)
	if err != nil {
		return nil, nil, 0, err
	}
	defer streams.Close()
	c := newHTTPClient(writers)
	var next atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, writers)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= messages {
					return
				}
				g := i % len(convs)
				sender := keys[0]
				if size > 0 {
					sender = keys[g*size]
				}
				t0 := time.Now()
				id, err := postMessage(c, e.url, sender, convs[g].ID)
				t1 := time.Now()
				if err != nil {
					errc <- err
					return
				}
				mu.Lock()
				started[id], answered[id] = t0, t1
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return nil, nil, 0, err
	}
	// Wait for every delivery, or until none has come for 10 s: what is
	// still missing then is reported as lost.
	for last, seen := time.Now(), got.Load(); ; {
		select {
		case <-done:
		case <-time.After(time.Second):
			if n := got.Load(); n != seen {
				last, seen = time.Now(), n
			}
			if time.Since(last) < 10*time.Second {
				continue
			}
		case <-ctx.Done():
			return nil, nil, 0, ctx.Err()
		}
		break
	}
	lost = want - int(got.Load())
	mu.Lock()
	defer mu.Unlock()
	for _, x := range received {
		t, ok := started[x.id]
		if !ok {
			return nil, nil, 0, fmt.Errorf("bench messaging: a stream received %s, which was not sent", x.id)
		}
		lat = append(lat, x.at.Sub(t))
		after = append(after, max(0, x.at.Sub(answered[x.id])))
	}
	slices.Sort(lat)
	slices.Sort(after)
	return lat, after, lost, nil
}

func postMessage(c *http.Client, base, key, convID string) (string, error) {
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/conversations/"+convID+"/messages", strings.NewReader(`{"body":"On my way to court 3"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	var m struct{ ID string }
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil || res.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("bench messaging: send answered %d", res.StatusCode)
	}
	return m.ID, nil
}
