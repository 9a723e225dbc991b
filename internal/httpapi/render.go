package httpapi

import (
	"time"

	"github.com/matchpoint-api/matchpoint/internal/outbox"
)

// optTime renders an optional timestamp: null when unset.
func optTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := outbox.FormatTime(*t)
	return &s
}
