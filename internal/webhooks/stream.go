package webhooks

import (
	"context"
	"fmt"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/ids"
)

// A stream subscription is read by "matchpoint listen" over a server-sent
// event stream instead of being POSTed to: its deliveries are rows like any
// other, leased to whichever node serves the stream, so the stream works on
// every node. The listener forwards each to a local URL, signs it with the
// subscription's secret, and acknowledges it with the local answer.

// streamLease is how long a delivery written to a stream waits for its
// acknowledgement before it is sent again (on the next connection).
const streamLease = time.Minute

// StreamItem is one delivery written to a stream.
type StreamItem struct {
	DeliveryID, EventID, EventType string
	Body                           []byte
}

// OpenStream checks that p may read the stream of subscription id.
func (s *Service) OpenStream(ctx context.Context, p *auth.Principal, id string) (*Subscription, error) {
	sub, err := s.own(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if sub.Transport != TransportStream {
		return nil, apperr.Conflictf("not_a_stream", "", "this webhook is delivered to its url; only stream subscriptions (transport: stream) are read as a stream")
	}
	if err := usable(sub); err != nil {
		return nil, err
	}
	return sub, s.store.TouchStream(ctx, sub.ID, s.clock.Now())
}

// StreamNext leases the subscription's pending deliveries to a stream.
func (s *Service) StreamNext(ctx context.Context, subID, owner string) ([]StreamItem, error) {
	jobs, err := s.store.ClaimStream(ctx, subID, owner, s.clock.Now(), streamLease, 100)
	if err != nil {
		return nil, err
	}
	var items []StreamItem
	var refused []*Outcome
	for _, j := range jobs {
		out := s.deliverable(j, owner)
		if out != nil {
			refused = append(refused, out)
			continue
		}
		body := j.Body
		if !j.Delivery.Test {
			body = Render(j.Delivery.EventType, j.Body, j.Sub.reader())
		}
		items = append(items, StreamItem{DeliveryID: j.Delivery.ID, EventID: j.Delivery.EventID, EventType: j.Delivery.EventType, Body: body})
	}
	if len(refused) > 0 {
		if _, err := s.store.RecordOutcomes(ctx, s.clock.Now(), refused); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// TouchStream records that a reader is still connected.
func (s *Service) TouchStream(ctx context.Context, subID string) error {
	return s.store.TouchStream(ctx, subID, s.clock.Now())
}

// NewStreamOwner names one stream connection in leases.
func (s *Service) NewStreamOwner() string { return "stream-" + s.manualOwner() }

// Ack records what the listener's local endpoint answered.
func (s *Service) Ack(ctx context.Context, p *auth.Principal, id, did string, status int, took time.Duration, errText string) (*Delivery, error) {
	sub, err := s.own(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if sub.Transport != TransportStream {
		return nil, apperr.Conflictf("not_a_stream", "", "only deliveries of stream subscriptions are acknowledged")
	}
	if !ids.Valid(ids.Delivery, did) {
		return nil, apperr.NotFoundf("no delivery %q", did)
	}
	d, err := s.store.Delivery(ctx, id, did)
	if err != nil {
		return nil, err
	}
	if d.Status != DeliveryPending {
		return d, nil // acknowledged already (a retried request)
	}
	a := Attempt{Number: d.Attempts + 1, StartedAt: s.clock.Now(), Duration: took, StatusCode: status,
		OK: status >= 200 && status < 300, Error: errText, Node: "listen"}
	if !a.OK && a.Error == "" {
		a.Error = fmt.Sprintf("the local endpoint answered %d", status)
	}
	out := &Outcome{Job: &Job{Delivery: *d, Sub: *sub}, Attempt: a, Final: DeliveryFailed}
	if a.OK {
		out.Final = DeliverySucceeded
	}
	if _, err := s.store.RecordOutcomes(ctx, s.clock.Now(), []*Outcome{out}); err != nil {
		return nil, err
	}
	return s.store.Delivery(ctx, id, did)
}
