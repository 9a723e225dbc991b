// Package idempotency makes POST requests safe to retry: a request sent again
// with the same Idempotency-Key and body gets the first answer again, without
// running twice; the same key with another body is refused.
package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/clock"
)

// TTL is how long a key is remembered (as Stripe does: 24 hours).
const TTL = 24 * time.Hour

// MaxKeyLength bounds the header's value.
const MaxKeyLength = 255

// StaleClaim is how long a claim without an answer blocks retries: a request
// that died with its node (or whose answer could not be stored) must not keep
// its key for a day. Requests themselves are bounded well below it.
const StaleClaim = time.Minute

// Record is a remembered request and, once finished, its response.
type Record struct {
	RequestHash string
	Status      int // 0 while the first request is still running
	Headers     map[string]string
	Body        []byte
}

// Store is the persistence idempotency needs.
type Store interface {
	// Claim records (owner, key) as in progress, unless it exists and is
	// younger than notBefore (or, while in progress, than staleBefore); then
	// it returns the existing record.
	Claim(ctx context.Context, owner, key, requestHash string, now, notBefore, staleBefore time.Time) (existing *Record, err error)
	Finish(ctx context.Context, owner, key string, r *Record) error
	Release(ctx context.Context, owner, key string) error
}

// Service applies the rules.
type Service struct {
	store Store
	clock clock.Clock
}

// NewService returns the idempotency service.
func NewService(s Store, c clock.Clock) *Service { return &Service{store: s, clock: c} }

// RequestHash identifies a request's method, path and body.
func RequestHash(method, path string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(method + " " + path + "\n"))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// Begin claims a key. It returns nil when the request should run (and later
// Finish or Release), a finished Record to replay, or a Conflict error.
func (s *Service) Begin(ctx context.Context, owner, key, requestHash string) (*Record, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	rec, err := s.store.Claim(ctx, owner, key, requestHash, now, now.Add(-TTL), now.Add(-StaleClaim))
	if err != nil || rec == nil {
		return nil, err
	}
	if rec.RequestHash != requestHash {
		return nil, apperr.Conflictf("idempotency_key_reused", "Idempotency-Key",
			"this Idempotency-Key was used with a different request; use a new key for a new request")
	}
	if rec.Status == 0 {
		return nil, ErrInProgress
	}
	return rec, nil
}

// ErrInProgress answers a retry that arrives while the first request runs;
// the HTTP layer adds Retry-After.
var ErrInProgress = apperr.Conflictf("idempotency_in_progress", "Idempotency-Key",
	"a request with this Idempotency-Key is still being processed; retry in a second")

// CheckKey accepts 1 to 255 printable ASCII characters, like the UUIDs and
// random strings clients send; anything else is refused before it is stored.
func CheckKey(key string) error {
	if len(key) == 0 || len(key) > MaxKeyLength {
		return &apperr.Error{Kind: apperr.BadRequest, Code: "invalid_idempotency_key", Param: "Idempotency-Key",
			Message: "Idempotency-Key must be 1 to 255 printable ASCII characters"}
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return &apperr.Error{Kind: apperr.BadRequest, Code: "invalid_idempotency_key", Param: "Idempotency-Key",
				Message: "Idempotency-Key must be 1 to 255 printable ASCII characters"}
		}
	}
	return nil
}

// Finish stores the response to replay.
func (s *Service) Finish(ctx context.Context, owner, key string, r *Record) error {
	return s.store.Finish(ctx, owner, key, r)
}

// Release forgets a claimed key, so a retry runs again (after a server error).
func (s *Service) Release(ctx context.Context, owner, key string) error {
	return s.store.Release(ctx, owner, key)
}
