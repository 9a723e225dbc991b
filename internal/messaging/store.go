package messaging

import (
	"context"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
)

// Store is the persistence the messaging domain needs.
type Store interface {
	// CreateConversation inserts c and its members, then runs fn holding
	// the new conversation's lock. A direct conversation whose pair has one
	// already is not inserted: fn gets the existing one and created false.
	CreateConversation(ctx context.Context, c *Conversation, members []*MemberState, fn func(l Locked, created bool) error) error
	// EventConversation opens a sports event's conversation for its
	// creator or someone going to it (apperr NotFound for no event,
	// Forbidden for anyone else), under its lock: the existing one, or c
	// made with the event's title, its creator (admin) and the people going
	// as members (created true). Its members follow the people going from
	// then on.
	EventConversation(ctx context.Context, eventID, callerID string, c *Conversation, fn func(l Locked, created bool) error) error
	// WithConversation runs fn in a transaction holding the conversation's
	// row lock, after checking that userID is one of its members: apperr
	// NotFound otherwise, as for a conversation that does not exist.
	WithConversation(ctx context.Context, id, userID string, fn func(l Locked) error) error
	// WithMessage is WithConversation for the conversation of a message
	// the user may read (apperr NotFound otherwise).
	WithMessage(ctx context.Context, messageID, userID string, fn func(l Locked, m *Message) error) error

	// Conversation reads a conversation for one of its members, with
	// their membership, unread count, last message and the members.
	Conversation(ctx context.Context, id, viewerID string) (*Conversation, error)
	// Conversations lists the viewer's conversations by latest activity,
	// after the cursor when one is given, limit of them.
	Conversations(ctx context.Context, viewerID string, after *ActivityCursor, limit int) ([]*Conversation, error)
	// Membership returns a current member's state; apperr NotFound when
	// the conversation does not exist or the user is not in it.
	Membership(ctx context.Context, id, userID string) (*MemberState, error)
	// Message reads a message the viewer may read (apperr NotFound
	// otherwise): a member of its conversation, neither blocking the other.
	Message(ctx context.Context, id, viewerID string) (*Message, error)
	// History lists the messages of a page (see HistoryQuery).
	History(ctx context.Context, q *HistoryQuery) ([]*Message, error)
	// Search finds the viewer's messages that match q, best first.
	Search(ctx context.Context, q *SearchQuery) ([]Found, error)
	// CheckPeople returns the first of ids that is not an account the
	// viewer may reach (missing, deleted, or blocking either way), or "".
	CheckPeople(ctx context.Context, viewerID string, ids []string) (string, error)
}

// ActivityCursor is a position in a list of conversations by activity.
type ActivityCursor struct {
	At time.Time
	ID string
}

// HistoryQuery is a page of a conversation's messages, or of a thread.
type HistoryQuery struct {
	ConversationID string
	ViewerID       string
	Thread         string // a root message id: the root and its replies; "": top-level messages
	// Forward pages by rising number from after From (0: the start);
	// otherwise by falling number from before From (0: the end).
	Forward bool
	From    int64
	Limit   int
}

// SearchQuery is a full-text search.
type SearchQuery struct {
	ViewerID       string
	Terms          []string
	ConversationID string // "" for all the viewer's conversations
	From, To       *time.Time
	Offset, Limit  int
}

// Locked is a conversation held under its row lock for the rest of a
// transaction. Everything written through it commits with the change.
type Locked interface {
	Conversation() *Conversation
	// Save writes back title, last_seq, activity and updated times.
	Save(ctx context.Context) error
	// Member returns a current member's state, or nil.
	Member(ctx context.Context, userID string) (*MemberState, error)
	// Members lists the current members, by joining time.
	Members(ctx context.Context) ([]*MemberState, error)
	// PutMember adds a member, or brings back one who had left.
	PutMember(ctx context.Context, m *MemberState) error
	// SetRole changes a current member's role.
	SetRole(ctx context.Context, userID, role string) error
	// EndMember records that a member left or was removed.
	EndMember(ctx context.Context, userID string, at time.Time) error
	// SetMute sets or clears (nil) a member's mute.
	SetMute(ctx context.Context, userID string, until *time.Time) error
	// SetRead moves a member's read marker to the message.
	SetRead(ctx context.Context, userID string, m *Message, at time.Time) error

	// Message reads one of the conversation's messages (apperr NotFound).
	Message(ctx context.Context, id string) (*Message, error)
	InsertMessage(ctx context.Context, m *Message) error
	// UpdateMessage writes back body, edited_at and deleted_at.
	UpdateMessage(ctx context.Context, m *Message) error
	// AddReply counts a reply in its thread's root.
	AddReply(ctx context.Context, rootID string, at time.Time) error

	// Readers lists the current members who may read what userID writes:
	// neither blocks the other.
	Readers(ctx context.Context, userID string) ([]string, error)
	Blocked(ctx context.Context, a, b string) (bool, error)
	// DisplayName is how notifications name a person.
	DisplayName(ctx context.Context, userID string) (string, error)

	Record(ctx context.Context, ev *outbox.Event) error
	Stream(ctx context.Context, userIDs []string, kind string, data any, at time.Time) error
	// NotifyAll records notifications of the change, one per person told.
	NotifyAll(ctx context.Context, ns []*notify.Notification) error
}
