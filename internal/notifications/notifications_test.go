package notifications

import (
	"strings"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/notify"
)

func TestDefaultsCoverEveryKind(t *testing.T) {
	for _, k := range notify.Kinds {
		c, ok := Defaults[k]
		if !ok {
			t.Errorf("kind %s has no default", k)
		}
		if !c.InApp {
			t.Errorf("kind %s is not in the centre by default", k)
		}
		if _, ok := kindLabels[k]; !ok {
			t.Errorf("kind %s has no label for emails", k)
		}
	}
	var st Settings
	if st.Choice(notify.KindMessage) != (Choice{InApp: true, Push: true}) || !st.Choice(notify.KindWebhookFailing).Email ||
		!st.Choice(notify.KindVerificationDecided).Email || st.Choice(notify.KindMatchRequested).Email {
		t.Error("defaults are not the documented ones")
	}
}

func TestApply(t *testing.T) {
	off, on := false, true
	var st Settings
	if err := st.Apply(Patch{Kinds: map[string]Override{notify.KindMessage: {Push: &off, Email: &on}}}); err != nil {
		t.Fatal(err)
	}
	if c := st.Choice(notify.KindMessage); c != (Choice{InApp: true, Email: true}) {
		t.Fatalf("choice %+v", c)
	}
	// Back to the defaults: nothing is kept.
	if err := st.Apply(Patch{Kinds: map[string]Override{notify.KindMessage: {Push: &on, Email: &off}}}); err != nil {
		t.Fatal(err)
	}
	if len(st.Overrides) != 0 || EncodeOverrides(st.Overrides) != "{}" {
		t.Errorf("overrides equal to the defaults kept: %v", st.Overrides)
	}
	err := st.Apply(Patch{Kinds: map[string]Override{"message.deleted": {Push: &on}}})
	if e, ok := apperr.As(err); !ok || e.Code != "unknown_notification_kind" || e.Param != "kinds.message.deleted" {
		t.Errorf("unknown kind: %v", err)
	}
	p := Patch{}
	p.QuietHours.Set, p.QuietHours.Value = true, &QuietHours{Start: "22:00", End: "22:00"}
	if err := st.Apply(p); err == nil {
		t.Error("an empty window accepted")
	}
	for _, bad := range []QuietHours{{"24:00", "07:00"}, {"7:00", "08:00"}, {"22:00", "07:60"}, {" 1:00", "02:00"}} {
		if err := bad.Check(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	decoded, err := DecodeOverrides(`{"message.new":{"push":false},"retired.kind":{"push":true}}`)
	if err != nil || len(decoded) != 1 || *decoded["message.new"].Push {
		t.Errorf("decode %v %v", decoded, err)
	}
}

func TestQuietHours(t *testing.T) {
	paris := Location("Europe/Paris")
	night := &QuietHours{Start: "22:00", End: "07:00"}
	lunch := &QuietHours{Start: "12:00", End: "13:30"}
	at := func(s string) time.Time {
		tm, err := time.ParseInLocation("2006-01-02 15:04", s, paris)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	for _, tc := range []struct {
		q     *QuietHours
		now   string
		quiet bool
		until string
	}{
		{night, "2026-03-01 21:59", false, ""},
		{night, "2026-03-01 22:00", true, "2026-03-02 07:00"},
		{night, "2026-03-02 03:10", true, "2026-03-02 07:00"},
		{night, "2026-03-02 07:00", false, ""},
		{lunch, "2026-03-02 12:30", true, "2026-03-02 13:30"},
		{lunch, "2026-03-02 13:30", false, ""},
		// The night of the change to summer time (02:00 -> 03:00) is an
		// hour shorter; the window still ends at 07:00 local.
		{night, "2026-03-29 01:30", true, "2026-03-29 07:00"},
		{nil, "2026-03-02 03:10", false, ""},
	} {
		until, quiet := tc.q.Until(at(tc.now), paris)
		if quiet != tc.quiet || (quiet && !until.Equal(at(tc.until))) {
			t.Errorf("%v at %s: %v until %v; want %v until %s", tc.q, tc.now, quiet, until.In(paris), tc.quiet, tc.until)
		}
		if quiet && until.Location() != time.UTC {
			t.Errorf("until is not UTC")
		}
	}
	if Location("Not/AZone") != time.UTC || Location("") != time.UTC {
		t.Error("unknown zones must read as UTC")
	}
}

func TestBackoff(t *testing.T) {
	base, limit := 5*time.Second, time.Hour
	prev := time.Duration(0)
	for a := 1; a <= 12; a++ {
		lo, hi := Backoff(a, 0, base, limit, 0), Backoff(a, 0, base, limit, 0.999999)
		if lo > hi || lo < prev*8/10 || hi > limit*12/10 {
			t.Errorf("attempt %d: %v..%v", a, lo, hi)
		}
		prev = lo
	}
	if Backoff(1, 0, base, limit, 0.5) != base {
		t.Errorf("first retry %v", Backoff(1, 0, base, limit, 0.5))
	}
	if d := Backoff(1, 10*time.Minute, base, limit, 0.5); d != 10*time.Minute {
		t.Errorf("Retry-After not honoured: %v", d)
	}
	if d := Backoff(1, 48*time.Hour, base, limit, 0.5); d != limit {
		t.Errorf("Retry-After not bounded: %v", d)
	}
}

func TestUnsubscribeTokens(t *testing.T) {
	s := signer{key: []byte("0123456789abcdef0123456789abcdef")}
	uid := ids.New(ids.User)
	tok := s.token(uid, notify.KindMessage)
	if u, k, err := s.check(tok); err != nil || u != uid || k != notify.KindMessage {
		t.Fatalf("check: %s %s %v", u, k, err)
	}
	other := signer{key: []byte("another key, another deployment")}
	forged := b64.EncodeToString([]byte(ids.New(ids.User)+" "+notify.KindMessage)) + tok[strings.IndexByte(tok, '.'):]
	for _, bad := range []string{"", "x.y", tok + "x", forged, other.token(uid, notify.KindMessage)} {
		if _, _, err := s.check(bad); err == nil {
			t.Errorf("token %q accepted", bad)
		}
	}
}

func TestEmail(t *testing.T) {
	r := &Record{Notification: *notify.New(time.Now(), "usr_1", notify.KindVerificationDecided, "Your ID <b>is</b> verified", "Welcome\r\nBcc: x", nil)}
	m := Email("nina@example.com", r, "https://m.example/v1/notifications/unsubscribe?token=a.b", time.Now())
	if m.Subject != "Your ID <b>is</b> verified" || !strings.Contains(m.HTML, "Your ID &lt;b&gt;is&lt;/b&gt; verified") {
		t.Errorf("subject %q html %s", m.Subject, m.HTML)
	}
	if !strings.Contains(m.Text, "ID verification decisions") || !strings.Contains(m.Text, "token=a.b") {
		t.Errorf("text %s", m.Text)
	}
	want := map[string]string{"List-Unsubscribe": "<https://m.example/v1/notifications/unsubscribe?token=a.b>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}
	for _, h := range m.Headers {
		if v, ok := want[h[0]]; ok && v != h[1] {
			t.Errorf("%s: %s", h[0], h[1])
		}
		delete(want, h[0])
	}
	if len(want) != 0 {
		t.Errorf("missing headers %v", want)
	}
}
