package matching

import (
	"time"

	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/wire"
)

// Payload is data.match of match.* events: the Match fields of the API
// document, section 2, plus the status and the time of each change. The
// request's message is left out: it is the requester's words to one person.
type Payload struct {
	ID                 string   `json:"id"`
	User1ID            string   `json:"user1_id"`
	User2ID            string   `json:"user2_id"`
	CompatibilityScore int      `json:"compatibility_score"`
	CommonSports       []string `json:"common_sports"`
	Sport              string   `json:"sport,omitempty"`
	Status             string   `json:"status"`
	CreatedAt          string   `json:"created_at"`
	UpdatedAt          string   `json:"updated_at"`
	ExpiresAt          string   `json:"expires_at"`
	AcceptedAt         string   `json:"accepted_at,omitempty"`
	DeclinedAt         string   `json:"declined_at,omitempty"`
	ExpiredAt          string   `json:"expired_at,omitempty"`
	CancelledAt        string   `json:"cancelled_at,omitempty"`
}

// PayloadOf renders a match for events.
func PayloadOf(m *Match) Payload {
	p := Payload{ID: m.ID, User1ID: m.User1ID, User2ID: m.User2ID, CompatibilityScore: m.Score,
		CommonSports: append([]string{}, m.Common...), Sport: m.Sport, Status: m.Status,
		CreatedAt: wire.Time(m.CreatedAt), UpdatedAt: wire.Time(m.UpdatedAt), ExpiresAt: wire.Time(m.ExpiresAt)}
	if m.ClosedAt != nil {
		t := wire.Time(*m.ClosedAt)
		switch m.Status {
		case StatusAccepted:
			p.AcceptedAt = t
		case StatusDeclined:
			p.DeclinedAt = t
		case StatusExpired:
			p.ExpiredAt = t
		case StatusCancelled:
			p.CancelledAt = t
		}
	}
	return p
}

// event builds a match.* event that both people may read.
func event(now time.Time, kind string, m *Match) (*outbox.Event, error) {
	ev, err := outbox.New(now, kind, m.User1ID, "match", PayloadOf(m))
	if err != nil {
		return nil, err
	}
	ev.Audience = []string{m.User1ID, m.User2ID}
	return &ev, nil
}

// notice is the notification of a change, to the person who should hear of it.
func notice(now time.Time, m *Match, to, kind, title string) *notify.Notification {
	return notify.New(now, to, kind, title, "", map[string]string{"match_id": m.ID, "user_id": m.Other(to)})
}
