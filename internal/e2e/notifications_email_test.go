package e2e

import (
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	netmail "net/mail"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// mailed is an accepted email, parsed.
type mailed struct {
	Header netmail.Header
	Text   string
	HTML   string
}

func parseMail(t *testing.T, m apptest.SMTPMessage) mailed {
	t.Helper()
	msg, err := netmail.ReadMessage(strings.NewReader(m.Data))
	if err != nil {
		t.Fatal(err)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type %q", msg.Header.Get("Content-Type"))
	}
	out := mailed{Header: msg.Header}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(p)
		switch ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type")); ct {
		case "text/plain":
			out.Text = string(b)
		case "text/html":
			out.HTML = string(b)
		}
	}
	return out
}

// TestNotificationEmail: the kinds a person wants by email are mailed once
// through MATCHPOINT_SMTP_URL as plain text and HTML, with a link and the
// RFC 8058 headers to unsubscribe from that kind; opening the link changes
// nothing, the one-click POST turns that kind's email off.
func TestNotificationEmail(t *testing.T) {
	for _, d := range testdb.Engines() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			smtp := apptest.StartSMTP(t)
			s := apptest.StartWith(t, d, apptest.Options{Configure: func(c *config.Config, _ *app.Options) {
				c.SMTPURL = "smtp://" + smtp.Addr + "?from=notifications@matchpoint.test"
			}})
			nina := s.User(t, "nina")
			key := s.Key(t, nina, "read", "write")

			// verification.decided is mailed by default; match.requested not.
			n := s.Notify(t, nina.ID, notify.KindVerificationDecided, "Your ID is verified", "You now show a verified badge.", "", nil)
			s.Notify(t, nina.ID, notify.KindMatchRequested, "Bob wants to play", "", "", nil)
			if len(smtp.Messages()) != 0 {
				t.Fatal("mailed in the request")
			}
			s.SendNotifications(t)
			msgs := smtp.Messages()
			if len(msgs) != 1 || msgs[0].To[0] != "nina@example.com" || msgs[0].From != "notifications@matchpoint.test" {
				t.Fatalf("messages %+v", msgs)
			}
			m := parseMail(t, msgs[0])
			if m.Header.Get("Subject") != "Your ID is verified" || m.Header.Get("X-Matchpoint-Notification") != n.ID ||
				!strings.Contains(m.Text, "You now show a verified badge.") || !strings.Contains(m.HTML, "<h1") ||
				!strings.Contains(m.HTML, "You now show a verified badge.") {
				t.Errorf("email %+v", m)
			}
			if m.Header.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" {
				t.Errorf("List-Unsubscribe-Post %q", m.Header.Get("List-Unsubscribe-Post"))
			}
			link := strings.Trim(m.Header.Get("List-Unsubscribe"), "<>")
			if !strings.HasPrefix(link, s.URL+"/v1/notifications/unsubscribe?token=") || !strings.Contains(m.Text, link) ||
				!strings.Contains(m.HTML, `href="`+strings.ReplaceAll(link, "&", "&amp;")+`"`) {
				t.Fatalf("unsubscribe link %q not in the text and HTML:\n%s\n%s", link, m.Text, m.HTML)
			}

			// Opening the link (a person, or a link scanner) shows a page and
			// changes nothing.
			req, _ := http.NewRequest("GET", link, nil)
			page := do(t, req)
			if page.Status != 200 || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") ||
				!strings.Contains(string(page.Body), "ID verification decisions") || !strings.Contains(string(page.Body), `method="post"`) {
				t.Fatalf("page: %d %s", page.Status, page.Body)
			}
			if !settings(t, s, key, "GET", "").Kinds[notify.KindVerificationDecided].Email {
				t.Fatal("opening the link unsubscribed")
			}
			// The mail client's one-click POST (RFC 8058), without credentials.
			req, _ = http.NewRequest("POST", link, strings.NewReader("List-Unsubscribe=One-Click"))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r := do(t, req)
			if r.Status != 200 || str(r.JSON(t), "kind") != notify.KindVerificationDecided {
				t.Fatalf("one-click: %d %s", r.Status, r.Body)
			}
			st := settings(t, s, key, "GET", "")
			if c := st.Kinds[notify.KindVerificationDecided]; c.Email || !c.Push || !st.Kinds[notify.KindWebhookFailing].Email {
				t.Fatalf("after unsubscribing: %+v", st.Kinds)
			}
			s.Notify(t, nina.ID, notify.KindVerificationDecided, "Your ID was checked again", "", "", nil)
			s.SendNotifications(t)
			if len(smtp.Messages()) != 1 {
				t.Error("mailed after unsubscribing")
			}
			// The page's own form answers a page.
			req, _ = http.NewRequest("POST", link, strings.NewReader("List-Unsubscribe=One-Click"))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Accept", "text/html,application/xhtml+xml")
			if r := do(t, req); r.Status != 200 || !strings.Contains(string(r.Body), "Unsubscribed") {
				t.Errorf("form post: %d %s", r.Status, r.Body)
			}

			// A token is bound to its account and kind.
			u, _ := url.Parse(link)
			tok := u.Query().Get("token")
			forged := regexp.MustCompile(`^[^.]+`).ReplaceAllString(tok, "dXNyXzA2OGF5M3l6YmY4ejFybWJuM3kwcDZmczJnIG1lc3NhZ2UubmV3")
			for _, bad := range []string{forged, tok + "A", "nonsense"} {
				r := api(t, s, "POST", "/v1/notifications/unsubscribe?token="+url.QueryEscape(bad), "", "")
				wantProblem(t, s, r, 422, "invalid_unsubscribe_token", "token")
			}
			wantProblem(t, s, api(t, s, "POST", "/v1/notifications/unsubscribe", "", ""), 422, "validation_failed", "token")

			// Email for a conversation: once per notification, not once per
			// message folded into it.
			settings(t, s, key, "PATCH", `{"kinds":{"message.new":{"email":true}}}`)
			for _, text := range []string{"one", "two", "three"} {
				s.Notify(t, nina.ID, notify.KindMessage, "Ann sent you a message", text, "conversation:cnv_1", nil)
			}
			s.SendNotifications(t)
			if got := len(smtp.Messages()); got != 2 {
				t.Errorf("%d emails for one conversation's notification, want 1 more", got-1)
			}

			// A refusal the relay calls permanent is not retried; a
			// temporary one is.
			smtp.Refuse("451 4.3.0 try again later")
			s.Notify(t, nina.ID, notify.KindWebhookFailing, "Your webhook endpoint is failing", "", "", nil)
			s.SendNotifications(t)
			if s.PendingNotificationJobs(t) != 1 {
				t.Fatal("a temporarily refused email was not kept for a retry")
			}
			smtp.Refuse("")
			s.Clock.Advance(10 * 60e9)
			s.SendNotifications(t)
			if got := len(smtp.Messages()); got != 3 || s.PendingNotificationJobs(t) != 0 {
				t.Errorf("retried email: %d messages, %d jobs", got, s.PendingNotificationJobs(t))
			}
		})
	}
}

// TestVerificationDecisionNotifies: an operator's decision on an ID
// verification reaches the person in the centre and by email (both on by
// default for verification.decided), written in the review's transaction.
func TestVerificationDecisionNotifies(t *testing.T) {
	for _, d := range testdb.Engines() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			smtp := apptest.StartSMTP(t)
			s := apptest.StartWith(t, d, apptest.Options{Configure: func(c *config.Config, _ *app.Options) { c.SMTPURL = "smtp://" + smtp.Addr }})
			ctx := t.Context()
			nina := s.User(t, "nina")
			key := s.Key(t, nina, "read", "write")
			op, err := s.App.Users.Register(ctx, users.Registration{Email: "op@example.com", Username: "opal", Password: apptest.Password, Role: "operator"})
			if err != nil {
				t.Fatal(err)
			}
			if op, err = s.App.Users.SetTier(ctx, op.ID, users.TierEnterprise, nil); err != nil {
				t.Fatal(err)
			}
			r := api(t, s, "POST", "/v1/users/me/verification", key, `{"document_type":"passport"}`)
			if r.Status != 201 {
				t.Fatalf("request: %d %s", r.Status, r.Body)
			}
			vid := str(r.JSON(t), "id")
			if r = api(t, s, "POST", "/v1/verifications/"+vid+"/reject", s.Key(t, op, "admin"), `{"note":"The photo is blurred."}`); r.Status != 200 {
				t.Fatalf("reject: %d %s", r.Status, r.Body)
			}
			l := listNotifications(t, s, key, "")
			if len(l.Data) != 1 || l.Data[0].Kind != notify.KindVerificationDecided || l.Data[0].Title != "Your ID verification was not approved" ||
				l.Data[0].Body != "The photo is blurred." || l.Data[0].Data["verification_id"] != vid || l.Data[0].Data["status"] != "rejected" {
				t.Fatalf("centre %+v", l)
			}
			s.SendNotifications(t)
			if msgs := smtp.Messages(); len(msgs) != 1 || !strings.Contains(parseMail(t, msgs[0]).Text, "The photo is blurred.") {
				t.Fatalf("emails %+v", msgs)
			}
		})
	}
}
