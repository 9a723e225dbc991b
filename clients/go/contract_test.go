package matchpoint_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	matchpoint "github.com/matchpoint-api/matchpoint/clients/go"
)

// The contract scenario and the coverage test talk to a live service named
// by MATCHPOINT_BASE_URL, with the credentials of DECISIONS.md ("Client
// libraries against a given server"); test.sh starts one from this checkout
// when none is given.

type liveEnv struct {
	base, apiKey, login, password string
	oauth                         matchpoint.OAuthConfig
	certFile, keyFile             string
}

func live(t *testing.T) liveEnv {
	t.Helper()
	e := liveEnv{base: os.Getenv("MATCHPOINT_BASE_URL"), apiKey: os.Getenv("MATCHPOINT_API_KEY"),
		login: os.Getenv("MATCHPOINT_USER_LOGIN"), password: os.Getenv("MATCHPOINT_USER_PASSWORD"),
		oauth: matchpoint.OAuthConfig{ClientID: os.Getenv("MATCHPOINT_CLIENT_ID"), ClientSecret: os.Getenv("MATCHPOINT_CLIENT_SECRET"),
			RedirectURI: os.Getenv("MATCHPOINT_REDIRECT_URI"), Scopes: []string{"read", "write", "profile", "matching", "events"}},
		certFile: os.Getenv("MATCHPOINT_TEST_TLS_CERT"), keyFile: os.Getenv("MATCHPOINT_TEST_TLS_KEY")}
	if e.base == "" {
		t.Skip("MATCHPOINT_BASE_URL is not set: run clients/go/test.sh, which starts a service")
	}
	for name, v := range map[string]string{"MATCHPOINT_API_KEY": e.apiKey, "MATCHPOINT_USER_LOGIN": e.login,
		"MATCHPOINT_USER_PASSWORD": e.password, "MATCHPOINT_CLIENT_ID": e.oauth.ClientID, "MATCHPOINT_REDIRECT_URI": e.oauth.RedirectURI,
		"MATCHPOINT_TEST_TLS_CERT": e.certFile, "MATCHPOINT_TEST_TLS_KEY": e.keyFile} {
		if v == "" {
			t.Fatalf("%s is not set", name)
		}
	}
	return e
}

// TestCoverage fails when an operation of the served document has no method.
func TestCoverage(t *testing.T) {
	e := live(t)
	res, err := http.Get(e.base + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	methods := map[string]bool{}
	for _, m := range clientMethods() {
		methods[m] = true
	}
	n := 0
	for path, item := range doc.Paths {
		for verb, raw := range item {
			var op struct {
				OperationID string `json:"operationId"`
			}
			if json.Unmarshal(raw, &op) != nil || op.OperationID == "" {
				continue
			}
			n++
			name, ok := matchpoint.Operations[op.OperationID]
			if !ok || !methods[name] {
				t.Errorf("%s %s (operationId %s) has no method in the Go client: regenerate with go run ./clients/gen", verb, path, op.OperationID)
			}
		}
	}
	if n == 0 {
		t.Fatal("the served document lists no operation")
	}
	t.Logf("%d operations, each with a method", n)
}

// tlsReceiver is the scenario's webhook endpoint over HTTPS with the test
// certificate: it echoes verification challenges and keeps deliveries.
type tlsReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []delivery
}

type delivery struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, e liveEnv) *tlsReceiver {
	cert, err := tls.LoadX509KeyPair(e.certFile, e.keyFile)
	if err != nil {
		t.Fatal(err)
	}
	r := &tlsReceiver{}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var probe struct{ Type, Challenge string }
		_ = json.Unmarshal(body, &probe)
		if probe.Type == "webhook.verification" {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"challenge": probe.Challenge})
			return
		}
		r.mu.Lock()
		r.got = append(r.got, delivery{req.Header.Clone(), body})
		r.mu.Unlock()
	}))
	r.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	r.StartTLS()
	t.Cleanup(r.Close)
	return r
}

func (r *tlsReceiver) find(kind string) (delivery, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range r.got {
		var env struct{ Type string }
		if json.Unmarshal(d.body, &env) == nil && env.Type == kind {
			return d, true
		}
	}
	return delivery{}, false
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func must[T any](t *testing.T, what string) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
}

// TestContractScenario is the scenario every library runs against the
// real service.
func TestContractScenario(t *testing.T) {
	e := live(t)
	ctx := context.Background()
	owner := matchpoint.NewClient(e.base, matchpoint.WithAPIKey(e.apiKey))

	// OAuth: the authorization code flow with PKCE, signed in as a person
	// on the service's own login and consent pages.
	pkce, state := matchpoint.NewPKCE(), matchpoint.NewState()
	callback, err := signIn(e.base, owner.AuthorizeURL(e.oauth, state, pkce), e.login, e.password)
	if err != nil {
		t.Fatal(err)
	}
	code := must[string](t, "callback")(matchpoint.ParseCallback(callback, state))
	tokens := must[matchpoint.TokenSet](t, "exchange")(owner.ExchangeCode(ctx, e.oauth, code, pkce.Verifier))
	if tokens.AccessToken == "" || tokens.RefreshToken == "" || tokens.ExpiresAt.IsZero() {
		t.Fatalf("token set incomplete: access %t, refresh %t, expiry %s", tokens.AccessToken != "", tokens.RefreshToken != "", tokens.ExpiresAt)
	}
	// A token set past its expiry is refreshed before the first call, and
	// the new set goes to the hook.
	var saved []matchpoint.TokenSet
	var savedMu sync.Mutex
	persist := func(ts matchpoint.TokenSet) { savedMu.Lock(); saved = append(saved, ts); savedMu.Unlock() }
	expired := tokens
	expired.ExpiresAt = time.Now().Add(-time.Minute)
	member := matchpoint.NewClient(e.base, matchpoint.WithOAuth(e.oauth, expired, persist))
	memberMe := must[*matchpoint.Profile](t, "member get-me")(member.GetMe(ctx))
	if len(saved) != 1 || saved[0].AccessToken == tokens.AccessToken || saved[0].RefreshToken == tokens.RefreshToken {
		t.Fatalf("refresh on expiry: saved %d token sets", len(saved))
	}
	// An access token the API refuses (401) is refreshed once, however
	// many calls run at the same time.
	refused := member.Tokens()
	refused.AccessToken = "mpa_revoked"
	member = matchpoint.NewClient(e.base, matchpoint.WithOAuth(e.oauth, refused, persist))
	var wg sync.WaitGroup
	var failures atomic.Int32
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := member.GetMe(ctx); err != nil {
				t.Errorf("get-me after a 401: %v", err)
				failures.Add(1)
			}
		}()
	}
	wg.Wait()
	if failures.Load() > 0 || len(saved) != 2 {
		t.Fatalf("refresh on 401: %d failures, %d refreshes in all (want 2)", failures.Load(), len(saved))
	}

	// Profile read and update, for both people.
	ownerMe := must[*matchpoint.Profile](t, "get-me")(owner.GetMe(ctx))
	place := matchpoint.ProfilePatch{Location: matchpoint.String("Paris"), Sports: []string{"tennis"},
		SkillLevels: map[string]string{"tennis": "intermediate"}, TravelRadiusKm: matchpoint.Float(50)}
	updated := must[*matchpoint.Profile](t, "update-me")(owner.UpdateMe(ctx, place))
	if updated.ID != ownerMe.ID || updated.Location != "Paris" || !slices.Equal(updated.Sports, []string{"tennis"}) {
		t.Fatalf("update-me: %+v", updated)
	}
	place.Bio = matchpoint.String("Plays on Sundays")
	memberMe = must[*matchpoint.Profile](t, "member update-me")(member.UpdateMe(ctx, place))
	if memberMe.Bio != "Plays on Sundays" {
		t.Fatalf("member update-me: %+v", memberMe)
	}

	// A webhook subscription, verified by its challenge.
	rcv := newReceiver(t, e)
	hook := must[*matchpoint.Webhook](t, "create-webhook")(owner.CreateWebhook(ctx, matchpoint.CreateWebhookRequest{
		URL: matchpoint.String(rcv.URL + "/hook"), Events: []string{matchpoint.EventMatchAccepted}, Description: matchpoint.String("contract")}))
	if hook.Secret == "" {
		t.Fatalf("create-webhook gave no secret: %+v", hook)
	}
	waitFor(t, "the subscription's verification", func() bool {
		h, err := owner.GetWebhook(ctx, hook.ID)
		return err == nil && h.Status == "active"
	})

	// Match: find the member, ask, and the member accepts.
	found := false
	for rec, err := range owner.FindMatchesAutoPaging(ctx, matchpoint.FindCriteria{Sports: []string{"tennis"}, MaxDistance: matchpoint.Float(50)}) {
		if err != nil {
			t.Fatalf("find-matches: %v", err)
		}
		found = found || (rec.User != nil && rec.User.ID == memberMe.ID)
	}
	if !found {
		t.Fatal("find-matches did not find the member")
	}
	match := must[*matchpoint.Match](t, "create-match")(owner.CreateMatch(ctx, matchpoint.CreateMatchRequest{UserID: memberMe.ID, Sport: matchpoint.String("tennis")}))
	accepted := must[*matchpoint.Match](t, "accept-match")(member.AcceptMatch(ctx, match.ID))
	if accepted.Status != "accepted" {
		t.Fatalf("accept-match: status %s", accepted.Status)
	}

	// A conversation with a message: the owner writes, the member reads it.
	conv := must[*matchpoint.Conversation](t, "create-conversation")(owner.CreateConversation(ctx, matchpoint.ConversationDraft{MemberIDs: []string{memberMe.ID}}))
	sent := must[*matchpoint.View](t, "send-message")(owner.SendMessage(ctx, conv.ID, matchpoint.MessageDraft{Body: "Sunday at ten?"}))
	read := must[*matchpoint.ListView](t, "list-messages")(member.ListMessages(ctx, conv.ID, nil))
	if len(read.Data) != 1 || read.Data[0].ID != sent.ID || read.Data[0].Body == nil || *read.Data[0].Body != "Sunday at ten?" || read.Data[0].SenderID != ownerMe.ID {
		t.Fatalf("the member reads %+v", read.Data)
	}

	// The delivery of match.accepted, checked with the library's verify.
	var d delivery
	waitFor(t, "the match.accepted delivery", func() (ok bool) { d, ok = rcv.find(matchpoint.EventMatchAccepted); return })
	ev, err := matchpoint.VerifyWebhook(d.body, d.header, hook.Secret)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	data, ok := ev.Data.(*matchpoint.MatchAcceptedEventData)
	if !ok || data.Match == nil || data.Match.ID != match.ID {
		t.Fatalf("verified event: %+v", ev)
	}
	tampered := append([]byte(nil), d.body...)
	tampered[len(tampered)-2] ^= 1
	var verr *matchpoint.WebhookVerificationError
	if _, err := matchpoint.VerifyWebhook(tampered, d.header, hook.Secret); !errors.As(err, &verr) {
		t.Fatalf("a changed body verified: %v", err)
	}

	// An event with an RSVP.
	draft := func(title string, days int) matchpoint.EventDraft {
		return matchpoint.EventDraft{Title: title, Sport: "tennis", Location: "Paris", MaxParticipants: 4,
			Date: time.Now().Add(time.Duration(days) * 24 * time.Hour).UTC().Truncate(time.Second)}
	}
	event := must[*matchpoint.SportsEvent](t, "create-event")(owner.CreateEvent(ctx, draft("Doubles at Roland", 3)))
	rsvp := must[*matchpoint.EventRSVP](t, "put-rsvp")(member.PutRSVP(ctx, event.ID, matchpoint.PutRSVPRequest{Status: "going"}))
	if rsvp.Status != "going" || rsvp.UserID != memberMe.ID {
		t.Fatalf("put-rsvp: %+v", rsvp)
	}
	after := must[*matchpoint.SportsEvent](t, "get-event")(owner.GetEvent(ctx, event.ID))
	if after.GoingCount != event.GoingCount+1 {
		t.Fatalf("going count %d after the RSVP, %d before", after.GoingCount, event.GoingCount)
	}

	// A list walked page by page.
	want := []string{event.ID}
	for i := range 2 {
		want = append(want, must[*matchpoint.SportsEvent](t, "create-event")(owner.CreateEvent(ctx, draft("Practice", 4+i))).ID)
	}
	var seen []string
	for ev, err := range owner.ListMyEventsAutoPaging(ctx, &matchpoint.ListMyEventsParams{Limit: matchpoint.Int(1), Role: matchpoint.String("creator")}) {
		if err != nil {
			t.Fatalf("list-my-events: %v", err)
		}
		seen = append(seen, ev.ID)
	}
	slices.Sort(want)
	slices.Sort(seen)
	if !slices.Equal(seen, want) {
		t.Fatalf("walked %v, want %v", seen, want)
	}

	// A 404 and a 422 as typed errors.
	var apiErr *matchpoint.Error
	_, err = owner.GetEvent(ctx, "evt_0000000000000000000000000")
	if !errors.Is(err, matchpoint.ErrNotFound) || !errors.As(err, &apiErr) || apiErr.Status != 404 || apiErr.Code == "" || apiErr.RequestID == "" {
		t.Fatalf("get-event of an unknown id: %v", err)
	}
	_, err = owner.UpdateMe(ctx, matchpoint.ProfilePatch{Username: matchpoint.String("x")})
	if !errors.Is(err, matchpoint.ErrUnprocessableEntity) || !errors.As(err, &apiErr) || apiErr.Status != 422 || apiErr.Param != "username" {
		t.Fatalf("update-me with a short username: %v", err)
	}

	// Retries: a proxy in front of the service answers the first GET with
	// 503 and the first PATCH with 429 (both with Retry-After: 1, neither
	// forwarded), and loses the answer of the first POST (forwarded, then
	// answered 503): its retry must carry the same Idempotency-Key, so the
	// service replays its answer instead of creating a second event.
	proxy := newFlakyProxy(t, e.base)
	flaky := matchpoint.NewClient(proxy.URL, matchpoint.WithAPIKey(e.apiKey))
	start := time.Now()
	viaProxy := must[*matchpoint.Profile](t, "get-me through the proxy")(flaky.GetMe(ctx))
	if viaProxy.ID != ownerMe.ID || proxy.count("GET") != 2 || time.Since(start) < time.Second {
		t.Fatalf("503 retry: %d GETs in %s", proxy.count("GET"), time.Since(start))
	}
	start = time.Now()
	if _, err := flaky.UpdateMe(ctx, matchpoint.ProfilePatch{Bio: matchpoint.String("Retried")}); err != nil || proxy.count("PATCH") != 2 || time.Since(start) < time.Second {
		t.Fatalf("429 retry: %v, %d PATCHes in %s", err, proxy.count("PATCH"), time.Since(start))
	}
	retried := must[*matchpoint.SportsEvent](t, "create-event through the proxy")(flaky.CreateEvent(ctx, draft("Retried once", 6)))
	keys := proxy.idempotencyKeys("POST")
	if len(keys) != 2 || keys[0] == "" || keys[0] != keys[1] {
		t.Fatalf("the POST's attempts carried Idempotency-Keys %q", keys)
	}
	n := 0
	for ev, err := range owner.ListMyEventsAutoPaging(ctx, &matchpoint.ListMyEventsParams{Role: matchpoint.String("creator")}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Title == "Retried once" {
			n++
			if ev.ID != retried.ID {
				t.Errorf("a second event %s besides %s", ev.ID, retried.ID)
			}
		}
	}
	if n != 1 {
		t.Fatalf("%d events made by one retried POST", n)
	}
	if ua := proxy.userAgent(); !strings.HasPrefix(ua, "matchpoint-go/") {
		t.Errorf("User-Agent %q", ua)
	}
	proxy.reset()
	_, err = matchpoint.NewClient(proxy.URL, matchpoint.WithAPIKey(e.apiKey), matchpoint.WithMaxRetries(0)).GetMe(ctx)
	if !errors.Is(err, matchpoint.ErrServer) || !errors.As(err, &apiErr) || apiErr.Status != 503 {
		t.Fatalf("503 without retries: %v", err)
	}
}

// flakyProxy forwards to the service, failing the first request of some
// methods as described in TestContractScenario.
type flakyProxy struct {
	*httptest.Server
	mu   sync.Mutex
	seen []*http.Request
}

func newFlakyProxy(t *testing.T, base string) *flakyProxy {
	target, _ := url.Parse(base)
	forward := httputil.NewSingleHostReverseProxy(target)
	p := &flakyProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.seen = append(p.seen, r.Clone(context.Background()))
		first := p.countLocked(r.Method) == 1
		p.mu.Unlock()
		fail := func(status int) {
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(status)
			_, _ = fmt.Fprintf(w, `{"type":"about:blank","title":%q,"status":%d,"code":"proxy_%d"}`, http.StatusText(status), status, status)
		}
		switch {
		case first && r.Method == http.MethodGet:
			fail(http.StatusServiceUnavailable)
		case first && r.Method == http.MethodPatch:
			fail(http.StatusTooManyRequests)
		case first && r.Method == http.MethodPost:
			forward.ServeHTTP(httptest.NewRecorder(), r) // the answer is lost
			fail(http.StatusServiceUnavailable)
		default:
			forward.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *flakyProxy) countLocked(method string) int {
	n := 0
	for _, r := range p.seen {
		if r.Method == method {
			n++
		}
	}
	return n
}

func (p *flakyProxy) count(method string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.countLocked(method)
}

func (p *flakyProxy) idempotencyKeys(method string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, r := range p.seen {
		if r.Method == method {
			out = append(out, r.Header.Get("Idempotency-Key"))
		}
	}
	return out
}

func (p *flakyProxy) userAgent() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen[0].Header.Get("User-Agent")
}

func (p *flakyProxy) reset() {
	p.mu.Lock()
	p.seen = nil
	p.mu.Unlock()
}

// clientMethods lists the exported methods of *Client.
func clientMethods() []string { return methodNames(matchpoint.NewClient("http://localhost")) }
