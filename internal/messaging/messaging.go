// Package messaging is the messaging domain: direct and group
// conversations, messages with one-level threads, edits and tombstones,
// history pages that hold still while messages arrive, read markers and
// unread counts, full-text search over the caller's own conversations, and
// the events, stream entries and notifications each change sends.
//
// Every change runs inside one transaction that holds the conversation's
// row lock (Store.WithConversation): membership is checked there, message
// numbers are taken there, and the events that report the change commit
// with it.
package messaging

import "time"

// Kinds of conversation.
const (
	Direct = "direct" // two people; the same pair always gets the same one
	Group  = "group"  // a title, admins, up to MaxMembers people
)

// Roles in a group.
const (
	Admin  = "admin"
	Member = "member"
)

// Bounds: part of the API contract.
const (
	MaxBody    = 4000 // characters of a message, after trimming
	MaxTitle   = 100
	MaxMembers = 100 // of a group, its creator included
	MaxQuery   = 200
	MaxTerms   = 10
	// SearchWindow is how many of the newest matches a search ranks: a
	// common word in a busy account's conversations matches thousands of
	// messages, and ranking all of them costs in proportion; people look
	// for recent messages first (Slack ranks by recency as well as match).
	SearchWindow = 500
	// MaxSearchOffset bounds how deep ranked results page (within the window).
	MaxSearchOffset = SearchWindow - 100
)

// Stream kinds a conversation's members receive in real time.
const (
	StreamSent    = "message.sent"
	StreamEdited  = "message.edited"
	StreamDeleted = "message.deleted"
	StreamRead    = "message.read"
	StreamUpdated = "conversation.updated"
	StreamTyping  = "conversation.typing"
)

// Conversation is a conversation as one of its members sees it.
type Conversation struct {
	ID         string
	Kind       string
	Title      string
	CreatorID  string
	EventID    string // a sports event's own conversation; "" otherwise
	LastSeq    int64  // the number of the last message sent
	ActivityAt time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time

	// The viewer's side, filled by reads for one member.
	Me          *MemberState
	Unread      int
	LastMessage *Message
	Members     []*MemberState
}

// MemberState is one person's membership.
type MemberState struct {
	ConversationID string
	UserID         string
	Role           string
	JoinedAt       time.Time
	LeftAt         *time.Time
	MutedUntil     *time.Time
	ReadSeq        int64
	ReadMessageID  string
	ReadAt         *time.Time
}

// Message is a message of a conversation.
type Message struct {
	ID             string
	ConversationID string
	Seq            int64 // its number in the conversation
	SenderID       string
	ThreadID       string // the thread's root message, for a reply
	ReplyCount     int
	LastReplyAt    *time.Time
	Body           string
	CreatedAt      time.Time
	EditedAt       *time.Time
	DeletedAt      *time.Time
	SenderErased   bool // tombstoned when its sender's account was deleted
	// Moderation is the moderation engine's answer (JSON) when it warned
	// about the text; "" otherwise.
	Moderation string
}

// Deleted reports a tombstone.
func (m *Message) Deleted() bool { return m.DeletedAt != nil }

// Found is one search result.
type Found struct {
	Message *Message
	// Snippet is HTML-escaped text of the body around the match, with the
	// matched words inside <mark> and </mark>.
	Snippet string
}
