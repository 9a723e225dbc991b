// Package webpush sends Web Push messages (RFC 8030) with the payload
// encrypted for the browser (RFC 8291, aes128gcm content coding of RFC 8188)
// and the sender identified by a VAPID JWT (RFC 8292).
package webpush

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// recordSize is the rs of the single record every message is sent in. Push
// services accept 4096-byte bodies (RFC 8030 7.2), so one record holds any
// payload they take.
const recordSize = 4096

// overhead is what encryption adds to the plaintext: the header (salt 16,
// rs 4, idlen 1, key 65), the padding delimiter and the GCM tag.
const overhead = 16 + 4 + 1 + 65 + 1 + 16

// MaxPayload is the largest plaintext that fits one 4096-byte message.
const MaxPayload = recordSize - overhead

// ErrTooLarge is returned for a payload over MaxPayload.
var ErrTooLarge = errors.New("webpush: payload larger than 4096 bytes once encrypted")

// DecodeKey reads a subscription key: base64url, padded or not (browsers
// give unpadded base64url, some libraries standard base64).
func DecodeKey(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	if b, err := base64.RawURLEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(s)
}

// Encrypt encrypts plaintext for the subscription whose P-256 public key is
// uaPublic (65 bytes, uncompressed) and whose authentication secret is
// authSecret (16 bytes), with a fresh key pair and salt.
func Encrypt(uaPublic, authSecret, plaintext []byte) ([]byte, error) {
	as, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	salt := make([]byte, 16)
	if _, err := io.ReadFull(rand.Reader, salt); err != nil {
		return nil, err
	}
	return encrypt(uaPublic, authSecret, plaintext, as, salt)
}

// encrypt is RFC 8291 section 3 with the sender's key and salt given (the
// RFC's example in Appendix A fixes both).
func encrypt(uaPublic, authSecret, plaintext []byte, as *ecdh.PrivateKey, salt []byte) ([]byte, error) {
	if len(plaintext) > MaxPayload {
		return nil, ErrTooLarge
	}
	if len(authSecret) != 16 {
		return nil, fmt.Errorf("webpush: auth secret is %d bytes, want 16", len(authSecret))
	}
	ua, err := ecdh.P256().NewPublicKey(uaPublic)
	if err != nil {
		return nil, fmt.Errorf("webpush: subscription key: %w", err)
	}
	ecdhSecret, err := as.ECDH(ua)
	if err != nil {
		return nil, err
	}
	asPublic := as.PublicKey().Bytes()

	// The input keying material mixes the shared secret with the
	// subscription's auth secret, bound to both public keys.
	prkKey, err := hkdf.Extract(sha256.New, ecdhSecret, authSecret)
	if err != nil {
		return nil, err
	}
	keyInfo := "WebPush: info\x00" + string(uaPublic) + string(asPublic)
	ikm, err := hkdf.Expand(sha256.New, prkKey, keyInfo, 32)
	if err != nil {
		return nil, err
	}
	// RFC 8188: content encryption key and nonce from the salt.
	prk, err := hkdf.Extract(sha256.New, ikm, salt)
	if err != nil {
		return nil, err
	}
	cek, err := hkdf.Expand(sha256.New, prk, "Content-Encoding: aes128gcm\x00", 16)
	if err != nil {
		return nil, err
	}
	nonce, err := hkdf.Expand(sha256.New, prk, "Content-Encoding: nonce\x00", 12)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	// One record, so it is the last: the delimiter is 0x02, no padding.
	header := make([]byte, 0, 16+4+1+len(asPublic))
	header = append(header, salt...)
	header = binary.BigEndian.AppendUint32(header, recordSize)
	header = append(header, byte(len(asPublic)))
	header = append(header, asPublic...)
	padded := append(append(make([]byte, 0, len(plaintext)+1), plaintext...), 0x02)
	return gcm.Seal(header, nonce, padded, nil), nil
}
