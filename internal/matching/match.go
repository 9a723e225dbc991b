// Package matching recommends people to play with and carries match
// requests through their lifecycle: the compatibility score (score.go), the
// search with its hard filters (find.go), requests, answers and expiry
// (requests.go, expiry.go), a person's match statistics and blocks.
package matching

import (
	"context"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// Match statuses.
const (
	StatusPending   = "pending"
	StatusAccepted  = "accepted"
	StatusDeclined  = "declined"
	StatusExpired   = "expired"
	StatusCancelled = "cancelled"
)

// Statuses lists every status.
var Statuses = []string{StatusPending, StatusAccepted, StatusDeclined, StatusExpired, StatusCancelled}

// Match is a request from User1 (the requester) to User2 (the invited).
type Match struct {
	ID          string
	User1ID     string
	User2ID     string
	Sport       string // the sport asked for, or empty
	Message     string
	Score       int
	Common      []string
	Status      string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	ExpiresAt   time.Time
	ClosedAt    *time.Time // when it left pending
	Counterpart string     // for lists: the other person, from the reader's side
}

// Other is the person in m who is not userID.
func (m *Match) Other(userID string) string {
	if m.User1ID == userID {
		return m.User2ID
	}
	return m.User1ID
}

// Settings are the tunable rules (config: MATCHPOINT_MATCH_*).
type Settings struct {
	RequestTTL      time.Duration // a pending request expires after this (7 days)
	DeclineCooldown time.Duration // a declined pair is not shown again for this long (30 days)
	SuppressAfter   int           // impressions without action before a candidate is held back (5)
	SuppressFor     time.Duration // how long it is held back (7 days)
	PendingCap      int           // people holding this many unanswered requests are not recommended (20)
	Candidates      int           // the most index rows read for one search (1500)
}

// DefaultSettings are the documented defaults.
var DefaultSettings = Settings{RequestTTL: 7 * 24 * time.Hour, DeclineCooldown: 30 * 24 * time.Hour,
	SuppressAfter: 5, SuppressFor: 7 * 24 * time.Hour, PendingCap: 20, Candidates: 1500}

// Indexed is one row of the search index: a candidate with one of its sports.
type Indexed struct {
	Sport     string
	Skill     int
	Profile   Profile
	PendingIn int // requests received and not answered
}

// Excluded are the people a search must not show to a caller.
type Excluded map[string]bool

// ListFilter narrows a person's match history.
type ListFilter struct {
	Status string // empty: any
	Role   string // "sent", "received" or empty
	Before string // cursor: ids older than this
	Limit  int
}

// Tally counts matches by status.
type Tally struct {
	Total, Pending, Accepted, Declined, Expired, Cancelled int
}

// Stats are a person's match history in figures.
type Stats struct {
	Sent, Received Tally
	AverageScore   *float64 // of accepted matches
	TopSports      []SportCount
}

// SportCount is how many accepted matches had a sport in common.
type SportCount struct {
	Sport string
	Count int
}

// Block is one person blocked by another.
type Block struct {
	BlockerID string
	BlockedID string
	CreatedAt time.Time
}

// Store is the persistence matching needs. Writes record their outbox event
// and notification in the same transaction.
type Store interface {
	// Candidates reads index rows of the given sports in the cell ranges, at
	// most limit.
	Candidates(ctx context.Context, sports []string, ranges []CellRange, limit int) ([]Indexed, error)
	// Excluded lists who must not be shown to userID now: blocked either
	// way, a pending or accepted match, a decline since declinedSince, held
	// back after too many impressions.
	Excluded(ctx context.Context, userID string, now, declinedSince time.Time) (Excluded, error)
	// RecordImpressions counts one showing of each candidate to viewer; the
	// after-th showing holds the candidate back until now+hold.
	RecordImpressions(ctx context.Context, viewer string, candidates []string, now time.Time, after int, hold time.Duration) error
	// Profiles reads live accounts by id (missing ones are left out).
	Profiles(ctx context.Context, ids []string) (map[string]*users.User, error)

	// CreateMatch records m unless the two are blocked either way (NotFound),
	// already have a pending or accepted match (Conflict) or one declined
	// since declinedSince (Conflict).
	CreateMatch(ctx context.Context, m *Match, declinedSince time.Time, ev *outbox.Event, n *notify.Notification) error
	// MatchByID returns a match userID is in, or NotFound (also when the two
	// are blocked either way).
	MatchByID(ctx context.Context, userID, id string) (*Match, error)
	// CloseMatch moves a pending match to status at now if check accepts it,
	// and records what build returns.
	CloseMatch(ctx context.Context, userID, id, status string, now time.Time,
		check func(m *Match) error, build func(m *Match) (*outbox.Event, *notify.Notification, error)) (*Match, error)
	ListMatches(ctx context.Context, userID string, f ListFilter) ([]*Match, error)
	MatchStats(ctx context.Context, userID string) (*Stats, error)
	// ExpireDue expires up to limit pending matches whose time has come, each
	// once across every node, and records what build returns for each.
	ExpireDue(ctx context.Context, now time.Time, limit int, build func(m *Match) (*outbox.Event, *notify.Notification, error)) (int, error)

	// Block records that blocker blocks blocked (idempotent), cancels pending
	// matches between them and forgets impressions.
	Block(ctx context.Context, blocker, blocked string, now time.Time) (*Block, error)
	Unblock(ctx context.Context, blocker, blocked string) error
	ListBlocks(ctx context.Context, blocker, after string, limit int) ([]*Block, error)
	// Blocked reports whether a and b are blocked either way; Matched whether
	// they have an accepted match (for the users service's visibility rules).
	Blocked(ctx context.Context, a, b string) (bool, error)
	Matched(ctx context.Context, a, b string) (bool, error)
}
