package push

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
)

// b64 is the unpadded base64url of JWS (RFC 7515) and of Web Push keys.
var b64 = base64.RawURLEncoding

// signingInput is the JWS signing input: header and claims, each encoded.
func signingInput(header, claims any) (string, error) {
	h, err := json.Marshal(header)
	if err != nil {
		return "", err
	}
	c, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	return b64.EncodeToString(h) + "." + b64.EncodeToString(c), nil
}

// SignES256 returns a compact JWS signed with ECDSA P-256 and SHA-256: the
// signature is R and S as two 32-byte big-endian numbers (RFC 7518 3.4),
// not the ASN.1 form crypto/ecdsa produces.
func SignES256(key *ecdsa.PrivateKey, header, claims any) (string, error) {
	in, err := signingInput(header, claims)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(in))
	r, s, err := ecdsa.Sign(rand.Reader, key, sum[:])
	if err != nil {
		return "", err
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return in + "." + b64.EncodeToString(sig), nil
}

// SignRS256 returns a compact JWS signed with RSASSA-PKCS1-v1_5 and SHA-256.
func SignRS256(key *rsa.PrivateKey, header, claims any) (string, error) {
	in, err := signingInput(header, claims)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(in))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		return "", err
	}
	return in + "." + b64.EncodeToString(sig), nil
}

// ParsePrivateKey reads a PEM private key (PKCS #8, or the older PKCS #1 and
// SEC 1 forms), as in an APNs .p8 file or a service account's private_key.
func ParsePrivateKey(pemBytes []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("push: no PEM block in the key")
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		if s, ok := k.(crypto.Signer); ok {
			return s, nil
		}
		return nil, fmt.Errorf("push: unsupported key type %T", k)
	}
	if k, err := x509.ParseECPrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	return nil, errors.New("push: the key is not PKCS #8, SEC 1 or PKCS #1")
}
