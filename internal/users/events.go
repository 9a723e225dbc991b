package users

import (
	"time"

	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// Payload is data.user of user.* events: the User fields of the API document,
// section 2, plus verified.
type Payload struct {
	ID        string   `json:"id"`
	Email     string   `json:"email,omitempty"`
	Username  string   `json:"username,omitempty"`
	FirstName string   `json:"first_name"`
	LastName  string   `json:"last_name"`
	Sports    []string `json:"sports"`
	Location  string   `json:"location"`
	Verified  bool     `json:"verified"`
	CreatedAt string   `json:"created_at"`
	DeletedAt string   `json:"deleted_at,omitempty"`
}

func payloadOf(u *User) Payload {
	return Payload{
		ID: u.ID, Email: u.Email, Username: u.Username, FirstName: u.FirstName, LastName: u.LastName,
		Sports: append([]string{}, u.Sports...), Location: u.Location, Verified: u.Verified,
		CreatedAt: wire.Time(u.CreatedAt),
	}
}

func userEvent(now time.Time, typ string, u *User) (*outbox.Event, error) {
	ev, err := outbox.New(now, typ, u.ID, "user", payloadOf(u))
	return &ev, err
}

// deletedEvent carries no personal data: by the time it is delivered the
// data no longer exists.
func deletedEvent(now time.Time, id string, created time.Time) (*outbox.Event, error) {
	ev, err := outbox.New(now, outbox.UserDeleted, id, "user", struct {
		ID        string `json:"id"`
		Deleted   bool   `json:"deleted"`
		CreatedAt string `json:"created_at"`
		DeletedAt string `json:"deleted_at"`
	}{id, true, wire.Time(created), wire.Time(now)})
	return &ev, err
}
