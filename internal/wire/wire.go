// Package wire holds the API's conventions on the wire that more than the
// HTTP layer needs: domains render webhook payloads in the same shapes as the
// API's responses.
package wire

import "time"

// TimeLayout is the API's timestamp format: RFC 3339, UTC, "Z", milliseconds.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// Time renders a timestamp the way the whole API does.
func Time(t time.Time) string { return t.UTC().Format(TimeLayout) }

// OptTime renders an optional timestamp: nil when unset.
func OptTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := Time(*t)
	return &s
}
