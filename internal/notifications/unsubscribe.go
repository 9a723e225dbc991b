package notifications

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"slices"
	"strings"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/notify"
)

// Unsubscribe links carry a token that names the account and the kind and
// is signed with an instance key (HMAC-SHA256), so that a mail client's
// one-click POST (RFC 8058) needs no sign-in and nobody can forge a link for
// someone else. Tokens do not expire: an old email's link must still work.

// signer makes and checks unsubscribe tokens.
type signer struct{ key []byte }

var b64 = base64.RawURLEncoding

func (s signer) mac(payload string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte("matchpoint unsubscribe v1\x00" + payload))
	return m.Sum(nil)
}

// token returns the token unsubscribing userID from kind's emails.
func (s signer) token(userID, kind string) string {
	payload := userID + " " + kind
	return b64.EncodeToString([]byte(payload)) + "." + b64.EncodeToString(s.mac(payload))
}

var errBadToken = apperr.InvalidParam("token", "invalid_unsubscribe_token", "the unsubscribe link is not valid; change email settings in the app instead")

// check returns the account and kind of a token.
func (s signer) check(tok string) (userID, kind string, err error) {
	p, m, ok := strings.Cut(tok, ".")
	if !ok || len(tok) > 256 {
		return "", "", errBadToken
	}
	payload, err1 := b64.DecodeString(p)
	mac, err2 := b64.DecodeString(m)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, s.mac(string(payload))) {
		return "", "", errBadToken
	}
	userID, kind, ok = strings.Cut(string(payload), " ")
	if !ok || !ids.Valid(ids.User, userID) || !slices.Contains(notify.Kinds, kind) {
		return "", "", errBadToken
	}
	return userID, kind, nil
}
