package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/stream"
)

// StreamParams say where a reconnecting client resumes.
type StreamParams struct {
	LastEventID      string `header:"Last-Event-ID" maxLength:"20" doc:"The id of the last event received: what followed it is replayed first (browsers' EventSource sends it when it reconnects)"`
	LastEventIDQuery string `query:"last_event_id" maxLength:"20" doc:"The same, for clients that cannot set headers; the header wins when both are sent"`
}

// streamWriteWait is how long one write to a stream may block: a client
// that reads nothing for that long is disconnected.
const streamWriteWait = 15 * time.Second

// streamRetryMS is the reconnection delay the stream suggests to EventSource.
const streamRetryMS = 2000

func (s *server) registerStream() {
	huma.Register(s.api, huma.Operation{
		OperationID: "stream", Method: http.MethodGet, Path: "/v1/stream", Tags: []string{"Real-time stream"},
		Summary: "Receive your real-time stream",
		Description: "Server-sent events (`text/event-stream`) of what happens to you, on every node of the service: each event has " +
			"`id:` (a sequence number), `event:` (its kind: `notification`, and the messaging kinds `message.sent`, `message.edited`, " +
			"`message.deleted`, `message.read`, `conversation.updated`, `conversation.typing`) and `data:` (JSON; a notification " +
			"in the shape of GET /v1/notifications/{id}). Every open connection of yours receives every event. " +
			"Reconnect with `Last-Event-ID` (or `last_event_id`) to get what you missed first, in order, with nothing twice; " +
			"events are kept 7 days by default, and typing events are not replayed after 10 seconds. A comment line " +
			"(`: heartbeat`) arrives every 15 seconds by default. A client that falls too far behind is disconnected, with " +
			"nothing lost: it reconnects with its last id. Scope: read.",
		Security: requires(auth.ScopeRead),
		Responses: map[string]*huma.Response{"200": {Description: "An event stream", Content: map[string]*huma.MediaType{
			"text/event-stream": {Schema: &huma.Schema{Type: "string", Description: "id: <seq>\\nevent: <kind>\\ndata: <JSON>"}}}}},
	}, func(ctx context.Context, in *StreamParams) (*huma.StreamResponse, error) {
		last, resume, err := lastEventID(in)
		if err != nil {
			return nil, err
		}
		p := principalOf(ctx)
		c, err := s.stream.Open(ctx, p.UserID, last, resume)
		if err != nil {
			return nil, fmt.Errorf("open the stream: %w", err)
		}
		return &huma.StreamResponse{Body: func(hctx huma.Context) {
			defer c.Close()
			s.serveStream(hctx, c, p)
		}}, nil
	})
}

// lastEventID reads where the client resumes: the header, else the query
// parameter; none (or an empty one) starts with what happens next.
func lastEventID(in *StreamParams) (last int64, resume bool, err error) {
	raw, param := in.LastEventID, "Last-Event-ID"
	if raw == "" {
		raw, param = in.LastEventIDQuery, "last_event_id"
	}
	if raw == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 0 {
		return 0, false, &apperr.Error{Kind: apperr.BadRequest, Code: "invalid_last_event_id", Param: param,
			Message: param + " must be the id of an event of this stream (a whole number)."}
	}
	return n, true, nil
}

func (s *server) serveStream(hctx huma.Context, c *stream.Conn, p *auth.Principal) {
	ctx := hctx.Context()
	r, w := humago.Unwrap(hctx)
	rc := http.NewResponseController(w)
	// The server's read and write timeouts suit requests, not a stream that
	// stays open for hours: no read deadline (a background read hitting it
	// would cancel the request), and a write deadline per write instead.
	_ = rc.SetReadDeadline(time.Time{})
	hctx.SetHeader("Content-Type", "text/event-stream")
	hctx.SetHeader("Cache-Control", "no-store")
	hctx.SetHeader("X-Accel-Buffering", "no") // nginx: do not buffer
	hctx.SetStatus(http.StatusOK)
	send := func(write func(io.Writer) error) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteWait))
		return write(w) == nil
	}
	flush := func() bool { return rc.Flush() == nil }
	text := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	event := func(ev stream.Event) func(io.Writer) error {
		return func(w io.Writer) error { return stream.WriteSSE(w, ev) }
	}
	if !send(text(": matchpoint stream\nretry: "+strconv.Itoa(streamRetryMS)+"\n\n")) || !flush() {
		return
	}
	for {
		page, err := c.Replay(ctx)
		if err != nil {
			if ctx.Err() == nil {
				Logger(ctx).Warn("stream replay", "error", err.Error())
			}
			return
		}
		if len(page) == 0 {
			break
		}
		for _, ev := range page {
			if !send(event(ev)) {
				return
			}
		}
		if !flush() {
			return
		}
	}
	every := s.streamHeartbeat
	if every <= 0 {
		every = 15 * time.Second
	}
	beat := time.NewTicker(every)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-c.Live():
			if !send(event(ev)) {
				return
			}
			// Write what else is waiting before one flush.
			for more := true; more; {
				select {
				case ev := <-c.Live():
					if !send(event(ev)) {
						return
					}
				default:
					more = false
				}
			}
			if !flush() {
				return
			}
		case <-beat.C:
			// The credential is checked again at every heartbeat: a revoked
			// key or token, or an expired one, ends the stream (its client
			// then gets 401 on reconnecting) instead of keeping it open.
			if now, err := s.principal(r); err != nil || now.UserID != p.UserID || !now.Has(auth.ScopeRead) || s.suspended(now) {
				send(text(": the credential is no longer valid\n\n"))
				flush()
				return
			}
			if !send(text(": heartbeat\n\n")) || !flush() {
				return
			}
		case <-c.Done():
			if errors.Is(c.Err(), stream.ErrDropped) {
				send(text(": dropped: this client fell behind; reconnect with Last-Event-ID\n\n"))
				flush()
			}
			return
		}
	}
}
