package webhook_test

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/pkg/webhook"
)

// vectors were produced by the official Standard Webhooks JavaScript library
// (npm standardwebhooks 1.1.1, Webhook.sign); the first is the scheme's own
// published example.
var vectors = []struct {
	secret, id string
	ts         int64
	body, sig  string
}{
	{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, `{"test": 2432232314}`,
		"v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="},
	{"whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD", "whe_068b2k3n1ytkbrg5q9v7x8m0ca", 1767225600,
		`{"id":"whe_068b2k3n1ytkbrg5q9v7x8m0ca","type":"user.created","created":"2026-01-01T00:00:00.000Z","data":{"user":{"id":"usr_068b2k3n1ytkbrg5q9v7x8m0cb","username":"ann"}}}`,
		"v1,6WxmlyRdWBlNU+sRrZqcOVsxHL7s6ueVQGRoJFd/+uk="},
	{"whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", "whe_068b2k3n1ytkbrg5q9v7x8m0cc", 1767225601,
		`{"type":"webhook.verification","challenge":"c4a9"}`, "v1,CTKjpuxhny63c1kc6BP030ULIL77EZVabvcjK/UFNu0="},
}

func headers(id string, ts int64, sig string) http.Header {
	h := http.Header{}
	h.Set(webhook.HeaderID, id)
	h.Set(webhook.HeaderTimestamp, strconv.FormatInt(ts, 10))
	h.Set(webhook.HeaderSignature, sig)
	return h
}

func TestVectors(t *testing.T) {
	for _, v := range vectors {
		wh, err := webhook.New(v.secret)
		if err != nil {
			t.Fatal(err)
		}
		at := time.Unix(v.ts, 0)
		if got := wh.Sign(v.id, at, []byte(v.body)); got != v.sig {
			t.Errorf("Sign(%s) = %s, want %s", v.id, got, v.sig)
		}
		wh.Now = func() time.Time { return at.Add(time.Minute) }
		if err := wh.Verify([]byte(v.body), headers(v.id, v.ts, v.sig)); err != nil {
			t.Errorf("Verify(%s): %v", v.id, err)
		}
		// Several signatures (a rotated secret's grace period): one match is enough.
		if err := wh.Verify([]byte(v.body), headers(v.id, v.ts, "v1,AAAA v2,xyz "+v.sig)); err != nil {
			t.Errorf("Verify with several signatures: %v", err)
		}
		if err := wh.Verify([]byte(v.body+" "), headers(v.id, v.ts, v.sig)); !errors.Is(err, webhook.ErrNoMatch) {
			t.Errorf("tampered body: %v", err)
		}
		if err := wh.Verify([]byte(v.body), headers(v.id+"x", v.ts, v.sig)); !errors.Is(err, webhook.ErrNoMatch) {
			t.Errorf("other id: %v", err)
		}
		wh.Now = func() time.Time { return at.Add(6 * time.Minute) }
		if err := wh.Verify([]byte(v.body), headers(v.id, v.ts, v.sig)); !errors.Is(err, webhook.ErrTooOld) {
			t.Errorf("6 minutes later: %v", err)
		}
		wh.Now = func() time.Time { return at.Add(-6 * time.Minute) }
		if err := wh.Verify([]byte(v.body), headers(v.id, v.ts, v.sig)); !errors.Is(err, webhook.ErrTooNew) {
			t.Errorf("6 minutes early: %v", err)
		}
	}
}

func TestBadInput(t *testing.T) {
	if _, err := webhook.New("whsec_!!!"); !errors.Is(err, webhook.ErrInvalidSecret) {
		t.Errorf("bad secret: %v", err)
	}
	wh, _ := webhook.New(vectors[0].secret)
	if err := wh.Verify([]byte("{}"), http.Header{}); !errors.Is(err, webhook.ErrMissingHeaders) {
		t.Errorf("no headers: %v", err)
	}
	h := headers("msg_1", 1, "v1,x")
	h.Set(webhook.HeaderTimestamp, "yesterday")
	if err := wh.Verify([]byte("{}"), h); !errors.Is(err, webhook.ErrInvalidTimestamp) {
		t.Errorf("bad timestamp: %v", err)
	}
}
