package matching

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
	"github.com/matchpoint-api/matchpoint/internal/sports"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// MaxMessage is the longest message a request may carry.
const MaxMessage = 500

// Service is the matching domain.
type Service struct {
	store Store
	clock clock.Clock
	cfg   Settings
}

// NewService returns the matching domain; zero settings take the defaults.
func NewService(s Store, c clock.Clock, cfg Settings) *Service {
	d := DefaultSettings
	if cfg.RequestTTL > 0 {
		d.RequestTTL = cfg.RequestTTL
	}
	if cfg.DeclineCooldown > 0 {
		d.DeclineCooldown = cfg.DeclineCooldown
	}
	if cfg.SuppressAfter > 0 {
		d.SuppressAfter = cfg.SuppressAfter
	}
	if cfg.SuppressFor > 0 {
		d.SuppressFor = cfg.SuppressFor
	}
	if cfg.PendingCap > 0 {
		d.PendingCap = cfg.PendingCap
	}
	if cfg.Candidates > 0 {
		d.Candidates = cfg.Candidates
	}
	return &Service{store: s, clock: c, cfg: d}
}

// Settings returns the rules in force.
func (s *Service) Settings() Settings { return s.cfg }

// pairScore scores two accounts from their profiles, now.
func (s *Service) pairScore(a, b *users.User, now time.Time) Result {
	pa, pb := ProfileOf(a, now), ProfileOf(b, now)
	return Score(&pa, &pb, now)
}

// Request is what asking someone to play carries.
type Request struct {
	UserID  string
	Sport   string
	Message string
}

// Create asks r.UserID to play with requester.
func (s *Service) Create(ctx context.Context, requester string, r Request) (*Match, error) {
	if r.UserID == requester {
		return nil, apperr.InvalidParam("user_id", "cannot_match_self", "you cannot send a match request to yourself")
	}
	if !ids.Valid(ids.User, r.UserID) {
		return nil, apperr.NotFoundf("no user %q", r.UserID)
	}
	msg := strings.TrimSpace(r.Message)
	if utf8.RuneCountInString(msg) > MaxMessage {
		return nil, apperr.InvalidParam("message", "too_long", "message must be at most %d characters", MaxMessage)
	}
	if strings.ContainsFunc(msg, func(c rune) bool { return c < 0x20 && c != '\n' && c != '\t' }) {
		return nil, apperr.InvalidParam("message", "invalid_text", "message must not contain control characters")
	}
	ps, err := s.store.Profiles(ctx, []string{requester, r.UserID})
	if err != nil {
		return nil, err
	}
	me, them := ps[requester], ps[r.UserID]
	if me == nil {
		return nil, apperr.NotFoundf("no user %q", requester)
	}
	// Someone the requester may not see is, to them, someone who does not
	// exist: private profiles, the service's own account, "matches only"
	// profiles (no accepted match can exist before a request is accepted).
	if them == nil || them.Privacy.ProfileVisibility != users.VisibilityMembers || them.Role == "system" {
		return nil, apperr.NotFoundf("no user %q", r.UserID)
	}
	now := s.clock.Now()
	res := s.pairScore(me, them, now)
	if len(res.Common) == 0 {
		return nil, apperr.InvalidParam("user_id", "no_common_sport", "you and this person have no sport in common")
	}
	sport := ""
	if r.Sport != "" {
		n, ok := sports.Normalize(r.Sport)
		if !ok {
			return nil, apperr.InvalidParam("sport", "unknown_sport", "%q is not a known sport; GET /v1/sports lists them", r.Sport)
		}
		if !slices.Contains(res.Common, n) {
			return nil, apperr.InvalidParam("sport", "sport_not_shared", "%s is not a sport you both play", n)
		}
		sport = n
	}
	m := &Match{ID: ids.New(ids.Match), User1ID: requester, User2ID: r.UserID, Sport: sport, Message: msg,
		Score: res.Score, Common: res.Common, Status: StatusPending, CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(s.cfg.RequestTTL)}
	ev, err := event(now, outbox.MatchCreated, m)
	if err != nil {
		return nil, err
	}
	n := notice(now, m, m.User2ID, notify.KindMatchRequested, displayName(me)+" wants to play with you")
	n.Body = msg
	if err := s.store.CreateMatch(ctx, m, now.Add(-s.cfg.DeclineCooldown), ev, n); err != nil {
		return nil, err
	}
	return m, nil
}

func displayName(u *users.User) string {
	if u.FirstName != "" {
		return u.FirstName
	}
	return u.Username
}

// Get returns a match the caller is in.
func (s *Service) Get(ctx context.Context, userID, id string) (*Match, error) {
	if !ids.Valid(ids.Match, id) {
		return nil, apperr.NotFoundf("no match %q", id)
	}
	return s.store.MatchByID(ctx, userID, id)
}

// Accept is the invited person's yes.
func (s *Service) Accept(ctx context.Context, userID, id string) (*Match, error) {
	return s.answer(ctx, userID, id, StatusAccepted, outbox.MatchAccepted, notify.KindMatchAccepted, "accepted your match request")
}

// Decline is the invited person's no.
func (s *Service) Decline(ctx context.Context, userID, id string) (*Match, error) {
	return s.answer(ctx, userID, id, StatusDeclined, outbox.MatchDeclined, notify.KindMatchDeclined, "declined your match request")
}

func (s *Service) answer(ctx context.Context, userID, id, status, kind, nkind, what string) (*Match, error) {
	if !ids.Valid(ids.Match, id) {
		return nil, apperr.NotFoundf("no match %q", id)
	}
	now := s.clock.Now()
	return s.store.CloseMatch(ctx, userID, id, status, now, func(m *Match) error {
		if m.User2ID != userID {
			return apperr.Forbiddenf("not_invited", "only the person invited answers a match request")
		}
		return pending(m)
	}, func(m *Match) (*outbox.Event, *notify.Notification, error) {
		ev, err := event(now, kind, m)
		if err != nil {
			return nil, nil, err
		}
		name := "Someone"
		if ps, err := s.store.Profiles(ctx, []string{userID}); err == nil && ps[userID] != nil {
			name = displayName(ps[userID])
		}
		return ev, notice(now, m, m.User1ID, nkind, name+" "+what), nil
	})
}

// Cancel is the requester taking a pending request back. The document has
// no event kind for it, so it records none; the invited person's pending
// request simply disappears.
func (s *Service) Cancel(ctx context.Context, userID, id string) (*Match, error) {
	if !ids.Valid(ids.Match, id) {
		return nil, apperr.NotFoundf("no match %q", id)
	}
	return s.store.CloseMatch(ctx, userID, id, StatusCancelled, s.clock.Now(), func(m *Match) error {
		if m.User1ID != userID {
			return apperr.Forbiddenf("not_requester", "only the person who sent a match request cancels it")
		}
		return pending(m)
	}, func(*Match) (*outbox.Event, *notify.Notification, error) { return nil, nil, nil })
}

func pending(m *Match) error {
	if m.Status != StatusPending {
		return apperr.Conflictf("match_not_pending", "", "the match is %s, no longer pending", m.Status)
	}
	return nil
}

// List returns the caller's matches, newest first.
func (s *Service) List(ctx context.Context, userID string, f ListFilter) ([]*Match, error) {
	if f.Status != "" && !slices.Contains(Statuses, f.Status) {
		return nil, apperr.InvalidParam("status", "invalid_status", "status must be one of %s", strings.Join(Statuses, ", "))
	}
	if f.Role != "" && f.Role != "sent" && f.Role != "received" {
		return nil, apperr.InvalidParam("role", "invalid_role", "role must be sent or received")
	}
	return s.store.ListMatches(ctx, userID, f)
}

// Stats returns the caller's match figures.
func (s *Service) Stats(ctx context.Context, userID string) (*Stats, error) {
	return s.store.MatchStats(ctx, userID)
}

// ExpireDue runs one pass of expiry: every pending request past its time
// becomes expired and records match.expired, each once.
func (s *Service) ExpireDue(ctx context.Context) (int, error) {
	now := s.clock.Now()
	total := 0
	for {
		n, err := s.store.ExpireDue(ctx, now, 200, func(m *Match) (*outbox.Event, *notify.Notification, error) {
			ev, err := event(now, outbox.MatchExpired, m)
			if err != nil {
				return nil, nil, err
			}
			return ev, notice(now, m, m.User1ID, notify.KindMatchExpired, "Your match request expired without an answer"), nil
		})
		total += n
		if err != nil || n < 200 {
			return total, err
		}
	}
}

// RunExpiry expires due requests every interval until ctx ends.
func (s *Service) RunExpiry(ctx context.Context, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := s.ExpireDue(ctx); err != nil && ctx.Err() == nil {
			log.Warn("expire match requests", "error", err.Error())
		} else if n > 0 {
			log.Info("expired match requests", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Block hides blocker and blocked from each other.
func (s *Service) Block(ctx context.Context, blocker, blocked string) (*Block, error) {
	if blocker == blocked {
		return nil, apperr.InvalidParam("user_id", "cannot_block_self", "you cannot block yourself")
	}
	if !ids.Valid(ids.User, blocked) {
		return nil, apperr.NotFoundf("no user %q", blocked)
	}
	ps, err := s.store.Profiles(ctx, []string{blocked})
	if err != nil {
		return nil, err
	}
	if u := ps[blocked]; u == nil || u.Role == "system" {
		return nil, apperr.NotFoundf("no user %q", blocked)
	}
	return s.store.Block(ctx, blocker, blocked, s.clock.Now())
}

// Unblock lifts a block the caller made.
func (s *Service) Unblock(ctx context.Context, blocker, blocked string) error {
	if !ids.Valid(ids.User, blocked) {
		return apperr.NotFoundf("you have not blocked %q", blocked)
	}
	return s.store.Unblock(ctx, blocker, blocked)
}

// Blocks lists whom the caller blocks.
func (s *Service) Blocks(ctx context.Context, blocker, after string, limit int) ([]*Block, error) {
	return s.store.ListBlocks(ctx, blocker, after, limit)
}

// Relations answers the users service's visibility questions.
type Relations struct{ s Store }

// Relations returns what the users service asks about two people.
func (s *Service) Relations() Relations { return Relations{s.store} }

// Blocked reports a block either way.
func (r Relations) Blocked(ctx context.Context, a, b string) (bool, error) {
	return r.s.Blocked(ctx, a, b)
}

// Matched reports an accepted match.
func (r Relations) Matched(ctx context.Context, a, b string) (bool, error) {
	return r.s.Matched(ctx, a, b)
}
