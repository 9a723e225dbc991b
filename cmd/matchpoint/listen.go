package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/matchpoint-api/matchpoint/pkg/webhook"
)

const listenUsage = `usage: matchpoint listen --api-key KEY --forward-to URL [--events "user.* match.*"] [--base-url URL]

Receives your account's events from the service over a stream and forwards
each to a local URL, signed like a real delivery with a secret printed at
start, in the manner of "stripe listen". It prints one line per delivery with
your endpoint's answer, and deletes its temporary subscription on exit.
`

func listen(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("listen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, listenUsage); fs.PrintDefaults() }
	key := fs.String("api-key", getenv("MATCHPOINT_API_KEY"), "API key of the account (MATCHPOINT_API_KEY)")
	forward := fs.String("forward-to", "", "local URL to POST each event to, like http://localhost:4242/hook")
	events := fs.String("events", "*", "event types and wildcards, space- or comma-separated")
	base := fs.String("base-url", firstNonEmpty(getenv("MATCHPOINT_BASE_URL"), "http://localhost:8080"), "address of the service (MATCHPOINT_BASE_URL)")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if *key == "" || *forward == "" {
		fs.Usage()
		return errUsage
	}
	l := &listener{base: strings.TrimRight(*base, "/"), key: *key, forward: *forward, out: stdout, errOut: stderr,
		api: &http.Client{Timeout: 30 * time.Second}, local: &http.Client{Timeout: 15 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	kinds := strings.FieldsFunc(*events, func(r rune) bool { return r == ' ' || r == ',' })
	if err := l.subscribe(ctx, kinds); err != nil {
		return err
	}
	defer l.unsubscribe()
	fmt.Fprintf(stdout, "Ready! Forwarding %s events to %s\nYour webhook signing secret is %s (^C to quit)\n", strings.Join(kinds, " "), *forward, l.secret)
	for ctx.Err() == nil {
		err := l.stream(ctx)
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(stderr, "stream interrupted (%v); reconnecting\n", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	return nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

type listener struct {
	base, key, forward string
	id, secret         string
	wh                 *webhook.Webhook
	out, errOut        io.Writer
	api, local         *http.Client
}

// call makes an API request and decodes a JSON answer into v.
func (l *listener) call(ctx context.Context, method, path string, body, v any) error {
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, l.base+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+l.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := l.api.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if res.StatusCode >= 300 {
		var p struct{ Detail, Code string }
		_ = json.Unmarshal(b, &p)
		return fmt.Errorf("%s %s: %d %s: %s", method, path, res.StatusCode, p.Code, p.Detail)
	}
	if v != nil {
		return json.Unmarshal(b, v)
	}
	return nil
}

func (l *listener) subscribe(ctx context.Context, kinds []string) error {
	var sub struct{ ID, Secret string }
	if err := l.call(ctx, http.MethodPost, "/api/v1/webhooks", map[string]any{"transport": "stream", "events": kinds,
		"description": "matchpoint listen"}, &sub); err != nil {
		return err
	}
	wh, err := webhook.New(sub.Secret)
	if err != nil {
		return err
	}
	l.id, l.secret, l.wh = sub.ID, sub.Secret, wh
	return nil
}

func (l *listener) unsubscribe() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.call(ctx, http.MethodDelete, "/api/v1/webhooks/"+l.id, nil, nil); err != nil {
		fmt.Fprintf(l.errOut, "could not delete the temporary subscription %s: %v\n", l.id, err)
	}
}

// stream reads the server-sent events until the stream or ctx ends.
func (l *listener) stream(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.base+"/api/v1/webhooks/"+l.id+"/stream", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+l.key)
	req.Header.Set("Accept", "text/event-stream")
	res, err := (&http.Client{}).Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		return fmt.Errorf("stream answered %d: %s", res.StatusCode, b)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var event, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if event == "delivery" {
				l.deliver(ctx, data)
			}
			event, data = "", ""
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data += strings.TrimPrefix(line, "data: ")
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return errors.New("the service closed the stream")
}

// deliver forwards one delivery, prints its line and acknowledges it.
func (l *listener) deliver(ctx context.Context, data string) {
	var d struct {
		DeliveryID string `json:"delivery_id"`
		EventID    string `json:"event_id"`
		EventType  string `json:"event_type"`
		Body       string `json:"body"`
	}
	if err := json.Unmarshal([]byte(data), &d); err != nil {
		fmt.Fprintf(l.errOut, "unreadable delivery: %v\n", err)
		return
	}
	now := time.Now()
	status, errText := 0, ""
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.forward, strings.NewReader(d.Body))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(webhook.HeaderID, d.EventID)
		req.Header.Set(webhook.HeaderTimestamp, fmt.Sprint(now.Unix()))
		req.Header.Set(webhook.HeaderSignature, l.wh.Sign(d.EventID, now, []byte(d.Body)))
		var res *http.Response
		if res, err = l.local.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
			res.Body.Close()
			status = res.StatusCode
		}
	}
	took := time.Since(now)
	answer := fmt.Sprintf("[%d]", status)
	if err != nil {
		errText = err.Error()
		answer = "[error] " + errText
	}
	fmt.Fprintf(l.out, "%s  --> %-24s %s  <-- %s %s (%d ms)\n", now.UTC().Format("2006-01-02 15:04:05"), d.EventType, d.EventID,
		answer, http.MethodPost+" "+l.forward, took.Milliseconds())
	ack := map[string]any{"status_code": status, "duration_ms": float64(took.Microseconds()) / 1000}
	if errText != "" {
		ack["error"] = truncate(errText, 500)
	}
	if err := l.call(ctx, http.MethodPost, "/api/v1/webhooks/"+l.id+"/deliveries/"+d.DeliveryID+"/ack", ack, nil); err != nil && ctx.Err() == nil {
		fmt.Fprintf(l.errOut, "acknowledge %s: %v\n", d.DeliveryID, err)
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
