package webpush

import (
	"bytes"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"strings"
	"testing"
)

func b64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRFC8291Example encrypts the example of RFC 8291 Appendix A with its
// keys and salt and must produce its message byte for byte.
func TestRFC8291Example(t *testing.T) {
	plaintext := b64(t, "V2hlbiBJIGdyb3cgdXAsIEkgd2FudCB0byBiZSBhIHdhdGVybWVsb24")
	asPriv, err := ecdh.P256().NewPrivateKey(b64(t, "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"))
	if err != nil {
		t.Fatal(err)
	}
	if got := base64.RawURLEncoding.EncodeToString(asPriv.PublicKey().Bytes()); got != "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8" {
		t.Fatalf("as_public = %s", got)
	}
	uaPublic := b64(t, "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4")
	salt := b64(t, "DGv6ra1nlYgDCS1FRnbzlw")
	auth := b64(t, "BTBZMqHH6r4Tts7J_aSIgg")
	got, err := encrypt(uaPublic, auth, plaintext, asPriv, salt)
	if err != nil {
		t.Fatal(err)
	}
	want := "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
	if s := base64.RawURLEncoding.EncodeToString(got); s != want {
		t.Fatalf("message =\n%s\nwant\n%s", s, want)
	}
}

func TestEncryptRefuses(t *testing.T) {
	ua, _ := ecdh.P256().GenerateKey(nil)
	if _, err := Encrypt(ua.PublicKey().Bytes(), make([]byte, 16), make([]byte, MaxPayload+1)); err != ErrTooLarge {
		t.Errorf("oversized payload: %v", err)
	}
	if _, err := Encrypt(ua.PublicKey().Bytes(), make([]byte, 15), []byte("x")); err == nil {
		t.Error("short auth secret accepted")
	}
	if _, err := Encrypt(make([]byte, 65), make([]byte, 16), []byte("x")); err == nil {
		t.Error("a key off the curve accepted")
	}
	if _, err := Encrypt(ua.PublicKey().Bytes(), make([]byte, 16), make([]byte, MaxPayload)); err != nil {
		t.Errorf("largest payload: %v", err)
	}
}

func TestVAPIDKeyRoundTrip(t *testing.T) {
	s, err := GenerateVAPIDKey()
	if err != nil {
		t.Fatal(err)
	}
	k, err := ParseVAPIDKey(s)
	if err != nil {
		t.Fatal(err)
	}
	pub := b64(t, PublicKey(k))
	if len(pub) != 65 || pub[0] != 4 {
		t.Fatalf("public key is not an uncompressed point: %x", pub)
	}
	if _, err := ParseVAPIDKey("not-a-key"); err == nil {
		t.Error("garbage parsed as a key")
	}
}

// TestVAPIDTokenVerifies checks the JWT of a sender against its public key,
// the way a push service does.
func TestVAPIDTokenVerifies(t *testing.T) {
	s, _ := GenerateVAPIDKey()
	k, _ := ParseVAPIDKey(s)
	snd, err := New(Config{Key: k, Subject: "mailto:ops@example.com", Client: nil})
	if err == nil || snd != nil {
		t.Fatal("a sender without a client was made")
	}
	if _, err := New(Config{Key: k, Subject: "ops@example.com", Client: &httpClient}); err == nil {
		t.Fatal("a subject that is not mailto: or https: was accepted")
	}
	snd, err = New(Config{Key: k, Subject: "mailto:ops@example.com", Client: &httpClient})
	if err != nil {
		t.Fatal(err)
	}
	jwt, err := snd.token("https://push.example.net")
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("jwt %q", jwt)
	}
	var claims map[string]any
	if err := json.Unmarshal(b64(t, parts[1]), &claims); err != nil || claims["aud"] != "https://push.example.net" || claims["sub"] != "mailto:ops@example.com" {
		t.Fatalf("claims %v %v", claims, err)
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(k.Curve, b64(t, snd.PublicKey()))
	if err != nil {
		t.Fatal(err)
	}
	sig := b64(t, parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(sig) != 64 || !ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatal("the VAPID signature does not verify")
	}
	again, _ := snd.token("https://push.example.net")
	if again != jwt {
		t.Error("a fresh token was signed for every message")
	}
	if !bytes.Equal([]byte(Topic("conversation:cnv_1")), []byte(Topic("conversation:cnv_1"))) || len(Topic("x")) != 32 {
		t.Error("topic is not a stable 32-character value")
	}
}

var httpClient http.Client
