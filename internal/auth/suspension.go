package auth

import (
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// Suspension is an account's suspension by moderation. The queries that
// check a credential read it from the account's row, so a suspension applies
// to the very next request with any credential, on every node, and an
// account whose suspension ended works again without anything being undone.
type Suspension struct {
	Since time.Time
	Until *time.Time // nil: until lifted
}

// SuspensionOf builds a suspension from the account's two columns (Unix
// microseconds); nil when the account was never suspended or was lifted.
func SuspensionOf(since, until *time.Time) *Suspension {
	if since == nil {
		return nil
	}
	return &Suspension{Since: *since, Until: until}
}

// ActiveAt reports whether the suspension holds at now.
func (s *Suspension) ActiveAt(now time.Time) bool {
	return s != nil && !now.Before(s.Since) && (s.Until == nil || now.Before(*s.Until))
}

// Err is the answer to every request of a suspended account: 403
// account_suspended with the end, if any.
func (s *Suspension) Err() *apperr.Error {
	e := &apperr.Error{Kind: apperr.Forbidden, Code: "account_suspended", Message: "This account is suspended until an operator lifts the suspension."}
	if s.Until != nil {
		e.SuspendedUntil = wire.Time(*s.Until)
		e.Message = "This account is suspended until " + e.SuspendedUntil + "."
	}
	return e
}
