package oauth

import "testing"

// TestStatus: the token endpoint and the error reference take the status of
// every code from one table.
func TestStatus(t *testing.T) {
	for _, c := range ErrorCodes {
		want := 400
		switch c.Code {
		case ErrInvalidClient:
			want = 401
		case ErrServerError:
			want = 500
		}
		if got := Status(c.Code); got != want {
			t.Errorf("Status(%s) = %d, want %d", c.Code, got, want)
		}
	}
}
