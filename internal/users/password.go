package users

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
)

// Password rules (DECISIONS.md, Accounts; ASVS 2.1.1 and 2.1.7).
const (
	MinPassword = 12
	MaxPassword = 256
)

// commonPasswordsGz is the shipped list of common and breached passwords,
// lower case, one a line; commonpasswords/rebuild.sh makes it.
//
//go:embed commonpasswords/passwords.txt.gz
var commonPasswordsGz []byte

// commonPasswords holds the listed passwords that the length rule lets
// through: the others are refused anyway. Read on first use.
var commonPasswords = sync.OnceValue(func() map[string]struct{} {
	zr, err := gzip.NewReader(bytes.NewReader(commonPasswordsGz))
	if err != nil {
		panic("users: common password list: " + err.Error())
	}
	out := map[string]struct{}{}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		if n := utf8.RuneCountInString(sc.Text()); n >= MinPassword && n <= MaxPassword {
			out[sc.Text()] = struct{}{}
		}
	}
	if err := sc.Err(); err != nil {
		panic("users: common password list: " + err.Error())
	}
	return out
})

// IsCommonPassword reports whether pw, ignoring case, is on the list of
// common and breached passwords.
func IsCommonPassword(pw string) bool {
	_, ok := commonPasswords()[strings.ToLower(pw)]
	return ok
}

// CheckPassword validates a new password for the account with this username
// and email: its length, that it does not contain either, and that it is not
// a common or breached password.
func CheckPassword(pw, username, email string) error {
	if n := utf8.RuneCountInString(pw); n < MinPassword || n > MaxPassword {
		return PasswordLengthError()
	}
	lower := strings.ToLower(pw)
	if username != "" && strings.Contains(lower, strings.ToLower(username)) {
		return apperr.InvalidParam("password", "invalid_password", "password must not contain your username")
	}
	if email != "" && strings.Contains(lower, strings.ToLower(email)) {
		return apperr.InvalidParam("password", "invalid_password", "password must not contain your email address")
	}
	if IsCommonPassword(pw) {
		return apperr.InvalidParam("password", "invalid_password", "this password is one of the most common ones, found in breaches; choose another")
	}
	return nil
}

// PasswordLengthError is the error of a password too short or too long, also
// for one too long to read at all.
func PasswordLengthError() *apperr.Error {
	return apperr.InvalidParam("password", "invalid_password", "password must be %d to %d characters", MinPassword, MaxPassword)
}
