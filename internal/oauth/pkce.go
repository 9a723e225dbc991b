package oauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
)

// validPKCEString checks RFC 7636's shape for verifiers and challenges:
// 43 to 128 unreserved characters.
func validPKCEString(s string) bool {
	if len(s) < 43 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// S256 is the code challenge of a verifier.
func S256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func verifyPKCE(challenge, verifier string) bool {
	return validPKCEString(verifier) && subtle.ConstantTimeCompare([]byte(S256(verifier)), []byte(challenge)) == 1
}
