package webhooks

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/outbox"
)

// Kinds of the service's own that are not outbox kinds of the document.
const (
	// KindFailing tells an account's other endpoints that one of its
	// endpoints exhausted its retries. It is sent without being asked for.
	KindFailing = "webhook.failing"
	// KindVerification is the body of the challenge request.
	KindVerification = "webhook.verification"
)

// Wildcards a subscription may ask for besides the kinds themselves.
var Wildcards = []string{"*", "user.*", "match.*", "event.*", "message.*", "notification.*"}

// ValidPattern reports whether p is a kind of section 6.1 or a wildcard.
func ValidPattern(p string) bool {
	return slices.Contains(outbox.Kinds, p) || slices.Contains(Wildcards, p)
}

// Matches reports whether pattern p selects kind.
func Matches(p, kind string) bool {
	if p == "*" || p == kind {
		return true
	}
	fam, ok := strings.CutSuffix(p, ".*")
	return ok && strings.HasPrefix(kind, fam+".")
}

// Wants reports whether any of patterns selects kind.
func Wants(patterns []string, kind string) bool {
	for _, p := range patterns {
		if Matches(p, kind) {
			return true
		}
	}
	return false
}

// readScopes is the table of the API reference: the scopes, any one of
// which lets a credential read what a family of events is about.
var readScopes = map[string][]string{
	"user":         {auth.ScopeRead, auth.ScopeProfile},
	"match":        {auth.ScopeMatching, auth.ScopeRead},
	"event":        {auth.ScopeEvents, auth.ScopeRead},
	"message":      {auth.ScopeRead},
	"notification": {auth.ScopeRead},
	"webhook":      {auth.ScopeRead, auth.ScopeWrite},
}

// ReadScopes returns the scopes that allow reading kind's family.
func ReadScopes(kind string) []string {
	fam, _, _ := strings.Cut(kind, ".")
	return readScopes[fam]
}

// Readable reports whether a credential with scopes may read events of kind
// (admin: an Enterprise admin credential, which reads everything).
func Readable(kind string, scopes []string, admin bool) bool {
	if admin {
		return true
	}
	for _, s := range ReadScopes(kind) {
		if slices.Contains(scopes, s) {
			return true
		}
	}
	return false
}

// patternKinds expands a pattern to the kinds it selects.
func patternKinds(p string) []string {
	var out []string
	for _, k := range outbox.Kinds {
		if Matches(p, k) {
			out = append(out, k)
		}
	}
	return out
}

// Reader is who a delivery is for, as the payload rules need it.
type Reader struct {
	UserID string
	Admin  bool // an Enterprise admin credential: reads every field
}

// Render returns the body of event payload for reader: the event as
// recorded, less the fields the reader could not read through the API.
// Today that is the email of user.* events, which only the user (and an
// Enterprise admin) may read.
func Render(kind string, payload []byte, r Reader) []byte {
	if r.Admin || !strings.HasPrefix(kind, "user.") || !bytes.Contains(payload, []byte(`"email"`)) {
		return payload
	}
	var env outbox.Envelope
	if err := json.Unmarshal(payload, &env); err != nil {
		return payload
	}
	raw, ok := env.Data["user"]
	if !ok {
		return payload
	}
	var u map[string]json.RawMessage
	if err := json.Unmarshal(raw, &u); err != nil {
		return payload
	}
	var id string
	_ = json.Unmarshal(u["id"], &id)
	if id == r.UserID {
		return payload
	}
	if _, has := u["email"]; !has {
		return payload
	}
	delete(u, "email")
	env.Data["user"], _ = json.Marshal(u)
	b, err := json.Marshal(env)
	if err != nil {
		return payload
	}
	return b
}
