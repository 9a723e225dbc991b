package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// appendStream writes kind with data to the real-time stream of every user in
// userIDs, inside the transaction of the change it reports: the stream shows
// a change only once it commits, and a reconnect replays it from here. Domains
// call it next to appendEvent; the stream package reads and fans these out.
func appendStream(ctx context.Context, tx *sql.Tx, userIDs []string, kind string, data any, at time.Time) error {
	if len(userIDs) == 0 {
		return nil
	}
	body, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("store: encode %s stream event: %w", kind, err)
	}
	for _, id := range userIDs {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO stream_events (user_id, kind, data, created_at) VALUES ($1, $2, $3, $4)`,
			id, kind, string(body), micros(at)); err != nil {
			return fmt.Errorf("store: append %s stream event: %w", kind, err)
		}
	}
	return nil
}

func init() {
	// A stream event is addressed to its recipient alone: the erased
	// account's own stream goes with it.
	deleteRowsOf("stream_events", "user_id")
}
