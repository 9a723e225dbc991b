package secrets

import (
	"strings"
	"testing"
)

func TestTokens(t *testing.T) {
	tok := NewToken(AccessToken)
	if !strings.HasPrefix(tok, AccessToken) || len(tok) != len(AccessToken)+43+6 {
		t.Fatalf("token %q has the wrong shape", tok)
	}
	if !WellFormed(AccessToken, tok) {
		t.Fatal("a fresh token is not well formed")
	}
	if WellFormed(RefreshToken, tok) {
		t.Fatal("prefix not checked")
	}
	// Any single-character change breaks the check.
	for i := len(AccessToken); i < len(tok); i++ {
		b := []byte(tok)
		if b[i] == 'a' {
			b[i] = 'b'
		} else {
			b[i] = 'a'
		}
		if WellFormed(AccessToken, string(b)) {
			t.Fatalf("corrupted at %d and still well formed", i)
		}
	}
	if NewToken(AccessToken) == tok {
		t.Fatal("two tokens are equal")
	}
	if Hash(tok) == Hash(tok+"x") || len(Hash(tok)) != 64 {
		t.Fatal("hash is not SHA-256 hex of the whole string")
	}
	if h := Hint(APIKeyLive, "mpk_live_abcdefgh"); h != "mpk_live_...efgh" {
		t.Fatalf("hint = %q", h)
	}
}

func TestPasswords(t *testing.T) {
	h := HashPassword("correct horse")
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash = %q", h)
	}
	if ok, err := CheckPassword(h, "correct horse"); !ok || err != nil {
		t.Fatalf("right password: %v %v", ok, err)
	}
	if ok, _ := CheckPassword(h, "correct horsE"); ok {
		t.Fatal("wrong password accepted")
	}
	if HashPassword("correct horse") == h {
		t.Fatal("no salt")
	}
	if _, err := CheckPassword("$2a$10$bcrypt", "x"); err == nil {
		t.Fatal("foreign hash format accepted")
	}
}
