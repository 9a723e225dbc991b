package webhooks

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/matchpoint-api/matchpoint/pkg/webhook"
)

// newSecret makes an endpoint secret: "whsec_" + base64 of 32 random bytes.
func newSecret() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return webhook.SecretPrefix + base64.StdEncoding.EncodeToString(b[:])
}

// Sealer encrypts endpoint secrets at rest (AES-256-GCM). The service must
// sign with them, so they cannot be hashed; the key lives in the database's
// instance keys, apart from the rows it protects.
type Sealer struct{ aead cipher.AEAD }

// NewSealer returns a sealer with a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != 32 {
		return nil, errors.New("webhooks: the secret key must be 32 bytes")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts a secret: base64(nonce || ciphertext).
func (s *Sealer) Seal(plain string) string {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(s.aead.Seal(nonce, nonce, []byte(plain), nil))
}

// Open decrypts what Seal made.
func (s *Sealer) Open(sealed string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(b) < s.aead.NonceSize() {
		return "", errors.New("webhooks: malformed sealed secret")
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, b[:n], b[n:], nil)
	if err != nil {
		return "", fmt.Errorf("webhooks: open sealed secret: %w", err)
	}
	return string(plain), nil
}
