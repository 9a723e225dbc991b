package matchpoint_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"time"

	matchpoint "github.com/matchpoint-api/matchpoint/clients/go"
)

func methodNames(v any) []string {
	t := reflect.TypeOf(v)
	out := make([]string, 0, t.NumMethod())
	for i := range t.NumMethod() {
		out = append(out, t.Method(i).Name)
	}
	return out
}

func sign(secret, id string, ts int64, body string) string {
	key, _ := base64.StdEncoding.DecodeString(secret[len("whsec_"):])
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + strconv.FormatInt(ts, 10) + "." + body))
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func header(id string, ts int64, sig string) http.Header {
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	h.Set("webhook-signature", sig)
	return h
}

// The scheme's published example, signed by the Standard Webhooks
// reference library; our signer must agree with it.
func TestWebhookSignatureVector(t *testing.T) {
	got := sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, `{"test": 2432232314}`)
	if got != "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" {
		t.Fatalf("signature %s", got)
	}
}

func TestVerifyWebhook(t *testing.T) {
	const secret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"
	body := `{"id":"whe_1","type":"user.created","created":"2026-01-01T00:00:00.000Z","data":{"user":{"id":"usr_1","username":"ann"}}}`
	now := time.Now().Unix()
	ev, err := matchpoint.VerifyWebhook([]byte(body), header("whe_1", now, "v1,bm90IGl0 "+sign(secret, "whe_1", now, body)), secret)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := ev.Data.(*matchpoint.UserCreatedEventData); !ok || d.User == nil || d.User.Username != "ann" || ev.Type != matchpoint.EventUserCreated {
		t.Fatalf("event %+v", ev)
	}
	var verr *matchpoint.WebhookVerificationError
	for name, h := range map[string]http.Header{
		"old":       header("whe_1", now-301, sign(secret, "whe_1", now-301, body)),
		"future":    header("whe_1", now+301, sign(secret, "whe_1", now+301, body)),
		"other id":  header("whe_2", now, sign(secret, "whe_1", now, body)),
		"no header": {},
		"v2 only":   header("whe_1", now, "v2,"+sign(secret, "whe_1", now, body)[3:]),
	} {
		if _, err := matchpoint.VerifyWebhook([]byte(body), h, secret); !errors.As(err, &verr) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := matchpoint.VerifyWebhook([]byte(body+" "), header("whe_1", now, sign(secret, "whe_1", now, body)), secret); !errors.As(err, &verr) {
		t.Errorf("changed body: %v", err)
	}
}
