package bench

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/egress"
	"github.com/matchpoint-api/matchpoint/internal/notifications"
	"github.com/matchpoint-api/matchpoint/internal/notifications/push"
	"github.com/matchpoint-api/matchpoint/internal/notifications/push/webpush"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// NotificationsOptions choose what `bench notifications` measures.
type NotificationsOptions struct {
	DatabaseURL string // postgres://... (a fresh schema); empty: a temporary SQLite file
	Members     int    // people in the group, the sender included; the others have one Web Push device each
	Messages    int    // group messages per round, each in a group of its own
	Rounds      int
	Workers     int // worker passes running side by side (as on several nodes)
}

// NotificationsResult is what `bench notifications` measures.
type NotificationsResult struct {
	Engine        string
	Notifications int // per round: members x messages
	// Fanout is notifications per second written by the messages'
	// transactions (addNotification with its push jobs), median round.
	Fanout float64
	// EndToEnd is notifications per second from the first message's commit
	// to the push service accepting the last push, median round.
	EndToEnd float64
	P50, P99 time.Duration // commit of a message to its push accepted
	// Baseline is pushes per second encrypted and posted straight to the
	// push service, no database or queue, with the same concurrency.
	Baseline float64
	Rounds   []float64 // end-to-end rate of each round
}

// The notifications bench: real group messages, sent through the messaging
// service, each notifying the group's other members in the message's own
// transaction; the pushes go out from the durable queue to a local Web Push
// service. Each message is in a group of its own, so that its pushes (whose
// Topic is the conversation) are told apart from the others'.
func init() {
	register(Command{Name: "notifications", Summary: "notifications/second fanned out from a group message to Web Push devices on a local push service, end to end, against encrypting and posting alone",
		Flags: func(fs *flag.FlagSet) Run {
			o := NotificationsOptions{Members: 100, Messages: 20, Rounds: 3, Workers: 2}
			fs.StringVar(&o.DatabaseURL, "postgres", "", "postgres://... server to measure on (default: SQLite)")
			fs.IntVar(&o.Members, "members", o.Members, "members of the group, the sender included (at most 100); the others each have a Web Push device")
			fs.IntVar(&o.Messages, "messages", o.Messages, "group messages per round")
			fs.IntVar(&o.Rounds, "rounds", o.Rounds, "measured rounds (the median is reported)")
			fs.IntVar(&o.Workers, "workers", o.Workers, "worker passes side by side, as on several nodes")
			return func(ctx context.Context, stdout, stderr io.Writer) error {
				if err := positive(o.Members, o.Messages, o.Rounds, o.Workers); err != nil {
					return err
				}
				r, err := Notifications(ctx, o, stderr)
				if err != nil {
					return err
				}
				printNotifications(stdout, o, r)
				return nil
			}
		}})
}

// pushReceiver is the push service: it accepts every message (201) and notes
// when each message's pushes arrived, by Topic (one per group message).
type pushReceiver struct {
	mu       sync.Mutex
	arrivals map[string][]time.Time
	total    int
	bad      int
	done     chan struct{}
	want     int
}

func (rc *pushReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n, _ := io.Copy(io.Discard, r.Body)
	ok := n > 86 && r.Header.Get("Content-Encoding") == "aes128gcm" && len(r.Header.Get("Authorization")) > 50
	now := time.Now()
	rc.mu.Lock()
	if !ok {
		rc.bad++
	}
	rc.arrivals[r.Header.Get("Topic")] = append(rc.arrivals[r.Header.Get("Topic")], now)
	rc.total++
	if rc.total == rc.want && rc.done != nil {
		close(rc.done)
	}
	rc.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
}

func (rc *pushReceiver) expect(n int) <-chan struct{} {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.arrivals, rc.total, rc.want, rc.done = map[string][]time.Time{}, 0, n, make(chan struct{})
	return rc.done
}

// Notifications runs the bench.
func Notifications(ctx context.Context, o NotificationsOptions, progress io.Writer) (*NotificationsResult, error) {
	rc := &pushReceiver{arrivals: map[string][]time.Time{}}
	srv := httptest.NewUnstartedServer(rc)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	dir, err := os.MkdirTemp("", "matchpoint-bench-notifications-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		return nil, err
	}

	if o.Members < 2 || o.Members > 100 {
		return nil, errors.New("bench notifications: --members is the group's size, 2 to 100 (the sender included)")
	}
	perRound := (o.Members - 1) * o.Messages
	res := &NotificationsResult{Engine: "sqlite", Notifications: perRound}
	dbURL := "sqlite:" + filepath.Join(dir, "bench.db")
	if o.DatabaseURL != "" {
		u, drop, err := freshSchema(o.DatabaseURL)
		if err != nil {
			return nil, err
		}
		defer drop()
		dbURL, res.Engine = u, "postgres"
	}
	cfg := config.Config{DatabaseURL: dbURL, BaseURL: "http://127.0.0.1", DocsURL: "http://127.0.0.1/docs/errors",
		WebhookAllowPrivate: true, WebhookCAFile: ca}
	a, err := app.Open(ctx, cfg, app.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, err
	}
	defer a.Close()

	fmt.Fprintf(progress, "bench notifications: a sender and %d members with a Web Push device each (%s)\n", o.Members-1, res.Engine)
	sender, err := a.Users.Register(ctx, users.Registration{Email: "sender@example.com", Username: "sender", Password: benchPassword})
	if err != nil {
		return nil, err
	}
	members := make([]string, o.Members-1)
	targets := make([]push.Target, o.Members-1)
	for i := range members {
		u, err := a.Users.Register(ctx, users.Registration{Email: fmt.Sprintf("member%d@example.com", i), Username: fmt.Sprintf("member%d", i),
			Password: benchPassword})
		if err != nil {
			return nil, err
		}
		k, _ := ecdh.P256().GenerateKey(rand.Reader)
		auth := make([]byte, 16)
		_, _ = rand.Read(auth)
		enc := base64.RawURLEncoding
		reg := notifications.DeviceRegistration{Platform: push.WebPush, Endpoint: fmt.Sprintf("%s/push/%d", srv.URL, i),
			P256DH: enc.EncodeToString(k.PublicKey().Bytes()), Auth: enc.EncodeToString(auth)}
		if _, err := a.Notifications.RegisterDevice(ctx, u.ID, reg); err != nil {
			return nil, err
		}
		members[i] = u.ID
		targets[i] = push.Target{Platform: push.WebPush, Token: reg.Endpoint, P256DH: reg.P256DH, Auth: reg.Auth}
	}

	if res.Baseline, err = pushBaseline(ctx, a, cfg, targets, o, rc); err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "bench notifications: baseline %.0f pushes/s\n", res.Baseline)

	var lat []time.Duration
	var fanouts []float64
	for round := range o.Rounds {
		groups := make([]string, o.Messages)
		for m := range groups {
			title := fmt.Sprintf("Sunday football %d.%d", round+1, m+1)
			c, _, err := a.Messaging.Create(ctx, sender.ID, members, &title)
			if err != nil {
				return nil, err
			}
			groups[m] = c.ID
		}
		done := rc.expect(perRound)
		wctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for range o.Workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for wctx.Err() == nil {
					n, err := a.NotificationWorker.RunOnce(wctx)
					if err != nil && wctx.Err() == nil {
						fmt.Fprintln(progress, "bench notifications: worker:", err)
					}
					if n == 0 {
						time.Sleep(2 * time.Millisecond)
					}
				}
			}()
		}
		committed := map[string]time.Time{}
		begin := time.Now()
		var writing time.Duration
		for _, id := range groups {
			t0 := time.Now()
			if _, err := a.Messaging.Send(ctx, id, sender.ID, "Who brings the ball?", ""); err != nil {
				stop()
				wg.Wait()
				return nil, err
			}
			writing += time.Since(t0)
			committed[webpush.Topic("conversation:"+id)] = time.Now()
		}
		select {
		case <-done:
		case <-time.After(5 * time.Minute):
			stop()
			wg.Wait()
			return nil, errors.New("bench notifications: pushes did not all arrive within 5 minutes")
		case <-ctx.Done():
			stop()
			wg.Wait()
			return nil, ctx.Err()
		}
		elapsed := time.Since(begin)
		stop()
		wg.Wait()
		rc.mu.Lock()
		for topic, ts := range rc.arrivals {
			for _, at := range ts {
				lat = append(lat, at.Sub(committed[topic]))
			}
		}
		bad := rc.bad
		rc.mu.Unlock()
		if bad > 0 {
			return nil, fmt.Errorf("bench notifications: %d malformed pushes", bad)
		}
		rate := float64(perRound) / elapsed.Seconds()
		res.Rounds = append(res.Rounds, rate)
		fanouts = append(fanouts, float64(perRound)/writing.Seconds())
		fmt.Fprintf(progress, "bench notifications: round %d: %d notifications in %v (%.0f/s end to end)\n", round+1, perRound, elapsed.Round(time.Millisecond), rate)
	}
	res.EndToEnd, res.Fanout = medianOf(res.Rounds), medianOf(fanouts)
	slices.Sort(lat)
	res.P50, res.P99 = lat[len(lat)/2], lat[len(lat)*99/100]
	return res, nil
}

// baseline encrypts and posts the same number of pushes straight to the
// push service with the worker's concurrency: what the queue costs on top.
func pushBaseline(ctx context.Context, a *app.App, cfg config.Config, targets []push.Target, o NotificationsOptions, rc *pushReceiver) (float64, error) {
	vapid, err := a.DB.InstanceKey(ctx, "vapid", func() string { return "" }, 0)
	if err != nil {
		return 0, err
	}
	key, err := webpush.ParseVAPIDKey(vapid)
	if err != nil {
		return 0, err
	}
	client, err := egress.NewClient(egress.Options{Policy: egress.Policy{AllowPrivate: true}, CAFile: cfg.WebhookCAFile})
	if err != nil {
		return 0, err
	}
	s, err := webpush.New(webpush.Config{Key: key, Subject: "mailto:bench@localhost", Client: client, Clock: clock.Real{}})
	if err != nil {
		return 0, err
	}
	total := len(targets) * o.Messages
	done := rc.expect(total)
	work := make(chan push.Target)
	var wg sync.WaitGroup
	begin := time.Now()
	for range 32 * o.Workers { // the worker's default send concurrency, per worker
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range work {
				s.Send(ctx, t, push.Message{ID: "ntf_bench", Kind: notify.KindMessage, Title: "Ann in Sunday football",
					Body: "Who brings the ball?", Count: 1, CollapseKey: "conversation:cnv_baseline", Created: time.Now(), TTL: time.Hour, Urgent: true})
			}
		}()
	}
	for range o.Messages {
		for _, t := range targets {
			work <- t
		}
	}
	close(work)
	wg.Wait()
	<-done
	return float64(total) / time.Since(begin).Seconds(), nil
}

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func printNotifications(w io.Writer, o NotificationsOptions, r *NotificationsResult) {
	fmt.Fprintf(w, "notifications: a group of %d members, %d messages per round, %d rounds, %d workers, %s\n",
		o.Members, o.Messages, o.Rounds, o.Workers, r.Engine)
	fmt.Fprintf(w, "  fan-out written (a group message sent: message, notifications, push jobs)   %9.0f notifications/s\n", r.Fanout)
	fmt.Fprintf(w, "  end to end (message committed -> push service accepted)                      %9.0f notifications/s   p50 %.0f ms   p99 %.0f ms\n",
		r.EndToEnd, ms(r.P50), ms(r.P99))
	fmt.Fprintf(w, "  baseline (encrypt + POST straight to the push service, no queue)             %9.0f pushes/s\n", r.Baseline)
	fmt.Fprintf(w, "  end to end / baseline                                                        %9.2f\n", r.EndToEnd/r.Baseline)
}
