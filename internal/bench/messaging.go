package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// MessagingFigures are one measured configuration's figures.
type MessagingFigures struct {
	PerSecond float64 `json:"per_second"`
	P50MS     float64 `json:"p50_ms"`
	P99MS     float64 `json:"p99_ms"`
	Requests  int     `json:"requests"`
	Errors    int     `json:"errors"`
	// CPUMS is the bench process's CPU time per request (service, SQLite,
	// load generator; not a PostgreSQL server's), which a loaded machine
	// inflates less than latency.
	CPUMS float64 `json:"cpu_ms_per_request"`
}

// measured is a round's figures with its CPU per request.
type measured struct {
	Stats
	cpu time.Duration
}

func cpuMeasure(name string, conc int, d time.Duration, work func(int) (bool, bool)) measured {
	st, cpu := cpuRun(name, conc, d, work)
	return measured{st, cpu}
}

func (m measured) String() string { return line(m.Stats, m.cpu) }

// medianMeasured is the round with the median p99.
func medianMeasured(rounds []measured) measured {
	s := slices.Clone(rounds)
	slices.SortFunc(s, func(a, b measured) int { return int(a.P99 - b.P99) })
	return s[len(s)/2]
}

func figuresOf(m measured) MessagingFigures {
	return MessagingFigures{PerSecond: m.Rate(), P50MS: ms(m.P50), P99MS: ms(m.P99), Requests: m.Requests, Errors: m.Errors, CPUMS: ms(m.cpu)}
}

// MessagingResult is what `bench messaging` prints (median rounds).
type MessagingResult struct {
	Engine        string `json:"engine"`
	Messages      int    `json:"messages"`
	Conversations int    `json:"conversations"`
	// SearcherMessages is how many messages the searching account's own
	// conversations hold: what a search may find.
	SearcherMessages int              `json:"searcher_messages"`
	Concurrency      int              `json:"concurrency"`
	SeedSeconds      float64          `json:"seed_seconds"`
	Read             MessagingFigures `json:"read_one"`    // GET /v1/messages/{id}: the baseline
	Search           MessagingFigures `json:"search"`      // GET /v1/messages/search?q=<one word>
	Search2          MessagingFigures `json:"search_two"`  // two words
	SendSpread       MessagingFigures `json:"send_spread"` // POST .../messages, one conversation per client
	SendOne          MessagingFigures `json:"send_one"`    // POST .../messages, every client in one conversation
	// SendCapacity is the send rate with SendClients clients, each in a
	// conversation of its own: enough that the single writer (SQLite) or
	// the database's commits (PostgreSQL) are never idle, so the rate is
	// what the service can take rather than what eight clients that each
	// wait for their answer ask of it (its latency shows what that costs).
	SendClients  int              `json:"send_clients"`
	SendCapacity MessagingFigures `json:"send_capacity"`
	// Ratios against reading one message, p99 over p99.
	SearchVsRead float64 `json:"search_p99_vs_read_p99"`
	SendVsRead   float64 `json:"send_p99_vs_read_p99"`
	// Stream is the send-to-receive latency over GET /v1/stream (nil with
	// --stream-clients 0).
	Stream *MessagingStream `json:"stream,omitempty"`
}

// MessagingOptions are what `bench messaging` measures beyond Options.
type MessagingOptions struct {
	Messages       int // seeded
	StreamClients  int // connected streams for the latency; 0: not measured
	StreamMessages int // messages sent while they are connected
	StreamWriters  int // closed-loop clients sending them
	SendClients    int // clients of the send capacity measure
}

// Messaging seeds n messages over conversations of five people, one in
// twenty of them with the searching account, then measures search and
// sending over HTTP against reading one message.
func Messaging(ctx context.Context, o Options, mo MessagingOptions, progress io.Writer) (*MessagingResult, error) {
	e, err := start(ctx, o)
	if err != nil {
		return nil, err
	}
	defer e.close()
	n := mo.Messages
	var streamed *MessagingStream
	if mo.StreamClients > 0 {
		if streamed, err = messagingStream(ctx, e, max(mo.StreamClients, 2), mo.StreamMessages, max(mo.StreamWriters, 1), progress); err != nil {
			return nil, err
		}
	}
	now := e.app.Clock.Now()
	nSenders := max(o.Concurrency, mo.SendClients)
	people, err := benchPeople(ctx, e, 200+nSenders)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(3, 4))
	nConv := max(n/1000, 100)
	convs := make([]store.SeedConversation, nConv)
	searcherIn := 0
	for i := range convs {
		c := store.SeedConversation{ID: ids.New(ids.Conversation)}
		for len(c.Members) < 5 {
			u := people[rng.IntN(200)].ID
			if !slices.Contains(c.Members, u) {
				c.Members = append(c.Members, u)
			}
		}
		if i%20 == 0 {
			c.Members[4] = e.user.ID
			searcherIn++
		}
		convs[i] = c
	}
	fmt.Fprintf(progress, "bench messaging: seeding %d messages in %d conversations on %s...\n", n, nConv, e.Engine)
	t0 := time.Now()
	if err := store.SeedMessaging(ctx, e.app.DB, convs, n, rng, now); err != nil {
		return nil, err
	}
	res := &MessagingResult{Engine: e.Engine, Messages: n, Conversations: nConv, Concurrency: o.Concurrency, SeedSeconds: time.Since(t0).Seconds(),
		Stream: streamed}
	fmt.Fprintf(progress, "bench messaging: seeded in %s; analysing\n", time.Since(t0).Round(time.Millisecond))
	if err := e.app.DB.Analyze(ctx); err != nil {
		return nil, err
	}
	if e.app.DB.Dialect == store.SQLite {
		if _, err := e.app.DB.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			return nil, err
		}
	}
	if err := e.app.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages m JOIN conversation_members cm
		ON cm.conversation_id = m.conversation_id AND cm.user_id = $1`, e.user.ID).Scan(&res.SearcherMessages); err != nil {
		return nil, err
	}
	// Messages the searcher may read, for the baseline.
	var own []string
	rows, err := e.app.DB.QueryContext(ctx, `SELECT m.id FROM messages m WHERE m.conversation_id = $1 LIMIT 1000`, convs[0].ID)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		own = append(own, id)
	}
	rows.Close()
	// Enterprise accounts with a limit out of reach: rate limiting is not
	// what is measured.
	limit := int64(1 << 40)
	for _, u := range append([]string{e.user.ID}, idsOf(people[200:])...) {
		if _, err := e.app.Users.SetTier(ctx, u, users.TierEnterprise, &limit); err != nil {
			return nil, err
		}
	}
	_, key, err := e.app.Keys.Create(ctx, apikeys.Spec{UserID: e.user.ID, Name: "bench", Scopes: []string{auth.ScopeRead, auth.ScopeWrite}})
	if err != nil {
		return nil, err
	}
	c := newHTTPClient(nSenders)
	words := store.SeedChatWords()
	rngs := make([]*rand.Rand, o.Concurrency)
	for i := range rngs {
		rngs[i] = rand.New(rand.NewPCG(uint64(i), 9))
	}
	// Queries use the words below the twenty most common ones (those are
	// in most messages: a search for "the" is not what people do).
	word := func(r *rand.Rand) string { return words[20+r.IntN(len(words)-20)] }
	search := func(terms int) func(int) (bool, bool) {
		return func(w int) (bool, bool) {
			q := word(rngs[w])
			for range terms - 1 {
				q += " " + word(rngs[w])
			}
			return get(c, e.url+"/v1/messages/search?q="+url.QueryEscape(q), key), true
		}
	}
	readOne := func(w int) (bool, bool) { return get(c, e.url+"/v1/messages/"+own[rngs[w].IntN(len(own))], key), true }

	fmt.Fprintf(progress, "bench messaging: %s, %d messages (%d in the searcher's conversations), concurrency %d, %d rounds of %s\n",
		e.Engine, n, res.SearcherMessages, o.Concurrency, o.Rounds, o.Duration)
	run("warm-up", o.Concurrency, time.Second, search(1))
	var reads, ones, twos []measured
	for i := range o.Rounds {
		r := cpuMeasure("GET /v1/messages/{id}", o.Concurrency, o.Duration, readOne)
		s1 := cpuMeasure("search, one word", o.Concurrency, o.Duration, search(1))
		s2 := cpuMeasure("search, two words", o.Concurrency, o.Duration, search(2))
		fmt.Fprintf(progress, "  round %d\n    %s\n    %s\n    %s\n", i+1, r, s1, s2)
		reads, ones, twos = append(reads, r), append(ones, s1), append(twos, s2)
	}
	read, one, two := medianMeasured(reads), medianMeasured(ones), medianMeasured(twos)
	res.Read, res.Search, res.Search2 = figuresOf(read), figuresOf(one), figuresOf(two)

	// Sending: each client is a member of a conversation of its own, and
	// all of them of one shared conversation (every send waits for that
	// conversation's row lock).
	senders := people[200:]
	keys := make([]string, len(senders))
	shared := store.SeedConversation{ID: ids.New(ids.Conversation), Members: []string{e.user.ID}}
	var ownConvs []store.SeedConversation
	for i, u := range senders {
		if _, keys[i], err = e.app.Keys.Create(ctx, apikeys.Spec{UserID: u.ID, Name: "bench", Scopes: []string{auth.ScopeWrite}}); err != nil {
			return nil, err
		}
		if i < o.Concurrency {
			shared.Members = append(shared.Members, u.ID)
		}
		ownConvs = append(ownConvs, store.SeedConversation{ID: ids.New(ids.Conversation), Members: []string{u.ID, people[i].ID, people[i+1].ID}})
	}
	if err := store.SeedMessaging(ctx, e.app.DB, append(ownConvs, shared), 0, rng, now); err != nil {
		return nil, err
	}
	body, _ := json.Marshal(map[string]string{"body": "Court 3 at ten? Bring the new balls"})
	sendTo := func(conv func(w int) string) func(int) (bool, bool) {
		return func(w int) (bool, bool) {
			return send(c, http.MethodPost, e.url+"/v1/conversations/"+conv(w)+"/messages", keys[w], string(body), http.StatusCreated), true
		}
	}
	spread := sendTo(func(w int) string { return ownConvs[w].ID })
	all := sendTo(func(int) string { return shared.ID })
	run("warm-up", o.Concurrency, time.Second, spread)
	var spreads, alls, caps []measured
	for i := range o.Rounds {
		sp := cpuMeasure("send, a conversation per client", o.Concurrency, o.Duration, spread)
		a := cpuMeasure("send, all in one conversation", o.Concurrency, o.Duration, all)
		cp := cpuMeasure(fmt.Sprintf("send, %d clients (capacity)", mo.SendClients), mo.SendClients, o.Duration, spread)
		fmt.Fprintf(progress, "  round %d\n    %s\n    %s\n    %s\n", i+1, sp, a, cp)
		spreads, alls, caps = append(spreads, sp), append(alls, a), append(caps, cp)
	}
	res.SendSpread, res.SendOne = figuresOf(medianMeasured(spreads)), figuresOf(medianMeasured(alls))
	res.SendClients, res.SendCapacity = mo.SendClients, figuresOf(medianMeasured(caps))
	res.SearchVsRead = ratio(one.P99, read.P99)
	res.SendVsRead = ratio(medianMeasured(spreads).P99, read.P99)
	return res, nil
}

func idsOf(us []*users.User) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.ID
	}
	return out
}
