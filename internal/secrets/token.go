// Package secrets makes and checks the service's high-entropy credentials
// (API keys, OAuth tokens and codes, client secrets) and its password hashes.
package secrets

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"hash/crc32"
	"math/big"
	"strings"
)

// Credential prefixes (DECISIONS.md, Secrets and tokens). The prefix tells a
// reader, a log scrubber or a secret scanner what a string is, and routes a
// bearer credential to the right verifier.
const (
	APIKeyLive    = "mpk_live_"
	APIKeyTest    = "mpk_test_"
	AccessToken   = "mpa_"
	RefreshToken  = "mpr_"
	AuthCode      = "mpc_"
	ClientSecret  = "mps_"
	WebSession    = "mpw_"
	randomChars   = 43 // 256 bits in base62
	checksumChars = 6  // CRC32 in base62
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewToken returns prefix + 256 random bits in base62 + a CRC32 check (GitHub
// style). The check lets a typo or a truncated paste be refused without a
// database round trip.
func NewToken(prefix string) string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("secrets: no randomness: " + err.Error())
	}
	body := encode62(new(big.Int).SetBytes(b[:]), randomChars)
	return prefix + body + checksum(prefix+body)
}

// WellFormed reports whether tok has the given prefix, the right length and a
// matching check.
func WellFormed(prefix, tok string) bool {
	rest, ok := strings.CutPrefix(tok, prefix)
	if !ok || len(rest) != randomChars+checksumChars {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if strings.IndexByte(base62, rest[i]) < 0 {
			return false
		}
	}
	body := rest[:randomChars]
	return checksum(prefix+body) == rest[randomChars:]
}

// Hash is how credentials are stored: SHA-256 of the whole string. They carry
// 256 random bits, so a slow hash would add cost without adding safety.
func Hash(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// Hint is what lists show of a credential: its prefix and last four characters.
func Hint(prefix, tok string) string {
	if len(tok) < 4 {
		return prefix
	}
	return prefix + "..." + tok[len(tok)-4:]
}

func checksum(s string) string {
	return encode62(new(big.Int).SetUint64(uint64(crc32.ChecksumIEEE([]byte(s)))), checksumChars)
}

func encode62(n *big.Int, width int) string {
	out := make([]byte, width)
	base := big.NewInt(62)
	mod := new(big.Int)
	for i := width - 1; i >= 0; i-- {
		n.DivMod(n, base, mod)
		out[i] = base62[mod.Int64()]
	}
	return string(out)
}
