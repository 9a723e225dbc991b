package config

import (
	"errors"
	"flag"
	"time"
)

// Stream holds the settings of the real-time stream (GET /v1/stream).
type Stream struct {
	// Heartbeat is how often an idle stream gets a comment line, so that
	// proxies and load balancers do not close it.
	Heartbeat time.Duration
	// Retention is how long stream events are kept for replay: a client
	// away longer reconnects without the events it missed.
	Retention time.Duration
	// Buffer is how many events may wait for one connection before it is
	// dropped as too slow (its client reconnects and catches up).
	Buffer int
}

// Defaults of the stream.
const (
	DefaultStreamHeartbeat = 15 * time.Second
	DefaultStreamRetention = 7 * 24 * time.Hour
	DefaultStreamBuffer    = 256
)

// registerStream adds the settings of the real-time stream.
func registerStream(fs *flag.FlagSet, getenv func(string) string, c *Config) {
	fs.DurationVar(&c.Stream.Heartbeat, "stream-heartbeat", c.envDuration(getenv, "MATCHPOINT_STREAM_HEARTBEAT", DefaultStreamHeartbeat),
		"how often an idle real-time stream gets a heartbeat comment (MATCHPOINT_STREAM_HEARTBEAT)")
	fs.DurationVar(&c.Stream.Retention, "stream-retention", c.envDuration(getenv, "MATCHPOINT_STREAM_RETENTION", DefaultStreamRetention),
		"how long real-time stream events are kept for replay with Last-Event-ID (MATCHPOINT_STREAM_RETENTION)")
	fs.IntVar(&c.Stream.Buffer, "stream-buffer", c.envCount(getenv, "MATCHPOINT_STREAM_BUFFER", DefaultStreamBuffer),
		"events queued per stream connection before a slow client is dropped (MATCHPOINT_STREAM_BUFFER)")
}

// validateStream checks the stream's settings; zero keeps a default.
func (c *Config) validateStream() error {
	if c.Stream.Heartbeat < 0 || c.Stream.Retention < 0 || c.Stream.Buffer < 0 {
		return errors.New("config: the stream's heartbeat, retention and buffer must not be negative")
	}
	if c.Stream.Heartbeat > 0 && c.Stream.Heartbeat < 100*time.Millisecond {
		return errors.New("config: MATCHPOINT_STREAM_HEARTBEAT must be at least 100ms")
	}
	return nil
}
