package secrets

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters: OWASP's recommended minimum (19 MiB, 2 passes, 1 lane).
// They are written into every hash, so raising them later keeps old hashes valid.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

var b64 = base64.RawStdEncoding

// hashSlots bounds concurrent argon2 runs: each takes 19 MiB and a core for
// tens of milliseconds, so a burst of sign-ins must queue rather than take
// the memory and CPU of every other request.
var hashSlots = make(chan struct{}, max(2, runtime.NumCPU()))

func argonKey(pw string, salt []byte, t, mem uint32, threads uint8, keyLen uint32) []byte {
	hashSlots <- struct{}{}
	defer func() { <-hashSlots }()
	return argon2.IDKey([]byte(pw), salt, t, mem, threads, keyLen)
}

// HashPassword returns a PHC-format argon2id hash of pw.
func HashPassword(pw string) string {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		panic("secrets: no randomness: " + err.Error())
	}
	key := argonKey(pw, salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemory, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// CheckPassword reports whether pw matches the PHC-format hash.
func CheckPassword(hash, pw string) (bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errors.New("secrets: not an argon2id hash")
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errors.New("secrets: unsupported argon2 version")
	}
	var mem, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &t, &p); err != nil {
		return false, fmt.Errorf("secrets: bad argon2 parameters: %w", err)
	}
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, fmt.Errorf("secrets: bad salt: %w", err)
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil {
		return false, fmt.Errorf("secrets: bad key: %w", err)
	}
	if mem > 4*argonMemory || t > 10 || len(want) > 64 {
		return false, errors.New("secrets: argon2 parameters out of bounds")
	}
	got := argonKey(pw, salt, t, mem, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// dummyHash is checked against when a login names no known account, so that
// a wrong username and a wrong password take the same time.
// It is made on first use, not at start-up.
var dummyHash = sync.OnceValue(func() string { return HashPassword("matchpoint-timing-equaliser") })

// BurnPasswordCheck spends the time of one password check.
func BurnPasswordCheck(pw string) { _, _ = CheckPassword(dummyHash(), pw) }
