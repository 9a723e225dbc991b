package users

import (
	"context"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/outbox"
)

// Store is the persistence the users domain needs. Every method that changes
// an account records its outbox event in the same transaction.
type Store interface {
	// CreateUser inserts u; a taken email or username is an apperr Conflict
	// whose Param names the field.
	CreateUser(ctx context.Context, u *User, ev *outbox.Event) error
	// UserByID returns a live (not deleted) account or apperr NotFound.
	UserByID(ctx context.Context, id string) (*User, error)
	// UserByEmailKey finds a live account by EmailKey.
	UserByEmailKey(ctx context.Context, key string) (*User, error)
	// UserByUsernameKey finds a live account by UsernameKey.
	UserByUsernameKey(ctx context.Context, key string) (*User, error)
	// ModifyUser loads the account under a write lock, lets fn change it and
	// name the event to record, and saves both. fn returning an error aborts.
	ModifyUser(ctx context.Context, id string, fn func(u *User) (*outbox.Event, error)) (*User, error)
	// DeleteUser erases the account's personal data, revokes every credential
	// it holds and records ev.
	DeleteUser(ctx context.Context, id string, at time.Time, ev *outbox.Event) error

	CreateVerification(ctx context.Context, v *Verification) error
	VerificationByID(ctx context.Context, id string) (*Verification, error)
	LatestVerification(ctx context.Context, userID string) (*Verification, error)
	ListVerifications(ctx context.Context, status, after string, limit int) ([]*Verification, error)
	// ReviewVerification records the decision on a pending request (apperr
	// Conflict if it is no longer pending) and, when approved, marks the user
	// verified and records ev.
	ReviewVerification(ctx context.Context, v *Verification, ev *outbox.Event) error
}
