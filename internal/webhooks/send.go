package webhooks

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/matchpoint-api/matchpoint/internal/egress"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/pkg/webhook"
)

// userAgent identifies deliveries.
const userAgent = "Matchpoint-Webhooks/1.0 (+https://github.com/matchpoint-api/matchpoint)"

// signature is the webhook-signature header for one message: the current
// secret's signature, then the previous secret's while it is in its grace
// period after a rotation.
func (s *Service) signature(sub *Subscription, id string, at time.Time, body []byte) (string, error) {
	secret, err := s.sealer.Open(sub.SecretEnc)
	if err != nil {
		return "", err
	}
	wh, err := webhook.New(secret)
	if err != nil {
		return "", err
	}
	sig := wh.Sign(id, at, body)
	if sub.OldSecretEnc != "" && at.Before(sub.OldSecretUntil) {
		old, err := s.sealer.Open(sub.OldSecretEnc)
		if err != nil {
			return "", err
		}
		if whOld, err := webhook.New(old); err == nil {
			sig += " " + whOld.Sign(id, at, body)
		}
	}
	return sig, nil
}

// post sends one signed message and reports the attempt. It never returns
// an error: what went wrong is the attempt's Error.
func (s *Service) post(ctx context.Context, sub *Subscription, msgID string, body []byte) (Attempt, []byte, http.Header) {
	start := time.Now()
	at := s.clock.Now()
	a := Attempt{StartedAt: at, Node: s.node}
	sig, err := s.signature(sub, msgID, at, body)
	if err != nil {
		s.log.Error("webhook secret unreadable", "webhook_id", sub.ID, "error", err.Error())
		a.Error = "internal: the endpoint's secret could not be read"
		return a, nil, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sub.URL, bytes.NewReader(body))
	if err != nil {
		a.Error = "invalid url"
		return a, nil, nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set(webhook.HeaderID, msgID)
	req.Header.Set(webhook.HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	req.Header.Set(webhook.HeaderSignature, sig)
	res, err := s.client.Do(req)
	if err != nil {
		a.Duration = time.Since(start)
		a.Error = describe(err, s.cfg.Timeout)
		return a, nil, nil
	}
	excerpt, _ := io.ReadAll(io.LimitReader(res.Body, responseExcerpt))
	// Drain a little more so the connection can be reused; give up on
	// larger bodies (the connection is then closed).
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	a.Duration = time.Since(start)
	a.StatusCode = res.StatusCode
	a.Response = cleanText(excerpt)
	a.OK = res.StatusCode >= 200 && res.StatusCode < 300
	if !a.OK {
		a.Error = fmt.Sprintf("the endpoint answered %d", res.StatusCode)
		if res.StatusCode >= 300 && res.StatusCode < 400 {
			a.Error += " (redirects are not followed)"
		}
	}
	return a, excerpt, res.Header
}

// cleanText keeps a response excerpt storable and showable as JSON text.
func cleanText(b []byte) string {
	s := string(b)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.ReplaceAll(s, "\x00", "")
}

// describe turns a transport error into a short, safe message: what a
// subscriber can act on, without the service's internal details.
func describe(err error, timeout time.Duration) string {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var netErr net.Error
	switch {
	case egress.Blocked(err):
		return "blocked: the address is not a public internet address"
	case errors.As(err, &dnsErr):
		return "DNS: " + dnsErr.Err + " (" + dnsErr.Name + ")"
	case errors.As(err, &unknownCA), errors.As(err, &hostErr), errors.As(err, &certErr):
		return "TLS: the certificate is not valid for this host or not signed by a trusted authority"
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return fmt.Sprintf("timeout: no complete answer within %s", timeout)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection reset before an answer"
	case strings.Contains(err.Error(), "tls:"):
		return "TLS: handshake failed"
	}
	return "connection failed"
}

// retryAfter reads a Retry-After header (seconds or an HTTP date).
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// delay is the wait before retry n (1-based): the schedule's entry, with
// ±20 % jitter on the default schedule, and at least the receiver's
// Retry-After, bounded by the schedule's longest wait.
func (s *Service) delay(n int, ra time.Duration) time.Duration {
	d := s.schedule[n-1]
	if s.jitter {
		d = time.Duration(float64(d) * (0.8 + 0.4*mrand.Float64()))
	}
	if ra > d {
		d = min(ra, slicesMax(s.schedule))
	}
	return d
}

func slicesMax(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

// attempt sends a job once and decides what follows.
func (s *Service) attempt(ctx context.Context, job *Job) *Outcome {
	body := job.Body
	if !job.Delivery.Test {
		body = Render(job.Delivery.EventType, job.Body, job.Sub.reader())
	}
	a, _, h := s.post(ctx, &job.Sub, job.Delivery.EventID, body)
	a.Number = job.Delivery.Attempts + 1
	out := &Outcome{Job: job, Attempt: a}
	s.decide(out, h)
	return out
}

// decide fills in what an attempt leads to, for deliveries of the normal
// schedule.
func (s *Service) decide(out *Outcome, h http.Header) {
	job, a := out.Job, &out.Attempt
	sub := &job.Sub
	now := s.clock.Now()
	if a.OK {
		out.Final = DeliverySucceeded
		out.Reactivate = sub.Status == StatusFailing || sub.FailingSince != nil ||
			(sub.Status == StatusDisabled && (sub.DisabledReason == ReasonFailure || sub.DisabledReason == ReasonGone))
		return
	}
	if job.Delivery.Test {
		out.Final = DeliveryFailed
		return
	}
	if sub.FailingSince == nil {
		out.StartClock = true
	} else if now.Sub(*sub.FailingSince) >= disableAfter {
		out.Disable = ReasonFailure
	}
	if a.StatusCode == http.StatusGone {
		out.Final, out.Disable = DeliveryFailed, ReasonGone
		return
	}
	if job.Delivery.Manual {
		out.Final = DeliveryFailed
		return
	}
	if a.Number <= len(s.schedule) {
		next := now.Add(s.delay(a.Number, retryAfter(h, now)))
		a.NextRetryAt = &next
		return
	}
	out.Final = DeliveryFailed
	out.StartFailing = sub.Status == StatusActive
}

// decideManual: a retry asked for by the owner is one extra attempt. A
// success completes the delivery (and reactivates the endpoint); a failure
// leaves the delivery as it was (failed, or pending on its schedule).
func (s *Service) decideManual(out *Outcome) {
	d := &out.Job.Delivery
	if out.Attempt.OK {
		s.decide(out, nil)
		return
	}
	if d.Status == DeliveryPending {
		next := d.NextAttemptAt
		out.Attempt.NextRetryAt = &next
		return
	}
	out.Final = DeliveryFailed
}

// verify sends the challenge and records the outcome: the subscription is
// active when the endpoint answers 2xx with JSON {"challenge": <same>}.
func (s *Service) verify(ctx context.Context, sub *Subscription) (*Subscription, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	challenge := hex.EncodeToString(b[:])
	body, _ := json.Marshal(map[string]string{"type": KindVerification, "challenge": challenge})
	a, excerpt, _ := s.post(ctx, sub, ids.New(ids.Envelope), body)
	v := &Verification{At: a.StartedAt, StatusCode: a.StatusCode, Error: a.Error, Response: a.Response}
	ok := false
	if a.OK {
		var answer struct {
			Challenge any `json:"challenge"`
		}
		if err := json.Unmarshal(excerpt, &answer); err != nil {
			v.Error = "the answer is not JSON holding the challenge"
		} else if answer.Challenge != challenge {
			v.Error = "the answer's challenge is not the one sent"
		} else {
			ok = true
		}
	}
	return s.store.RecordVerification(ctx, sub.ID, sub.URL, v, ok)
}
