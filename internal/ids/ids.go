// Package ids makes the service's opaque identifiers: a type prefix and a
// UUIDv7 in lower-case Crockford base32. The alphabet is in ASCII order, so ids
// sort by creation time and can double as pagination cursors.
package ids

import (
	"encoding/base32"
	"strings"

	"github.com/google/uuid"
)

// Prefixes of every identifier kind (DECISIONS.md, Identifiers).
const (
	User         = "usr_"
	Match        = "mch_"
	SportsEvent  = "evt_"
	Envelope     = "whe_"
	Webhook      = "whk_"
	Delivery     = "dlv_"
	Conversation = "cnv_"
	Message      = "msg_"
	Notification = "ntf_"
	Client       = "app_"
	APIKey       = "key_"
	RSVP         = "rsv_"
	Grant        = "grt_"
	Token        = "tok_"
	Code         = "cod_"
	Session      = "ses_"
	Verification = "ver_"
	Device       = "dev_"
	// Safety and moderation.
	Report             = "rpt_"
	Case               = "cas_"
	ModerationDecision = "dec_"
)

var enc = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// New returns a new identifier with the given prefix.
func New(prefix string) string {
	u := uuid.Must(uuid.NewV7())
	return prefix + enc.EncodeToString(u[:])
}

// Valid reports whether s looks like an identifier of the given prefix. It is a
// cheap shape check that keeps junk out of queries, not proof of existence.
func Valid(prefix, s string) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok || len(rest) != 26 {
		return false
	}
	_, err := enc.DecodeString(rest)
	return err == nil
}
