package webhooks

import (
	"fmt"
	"net"
	"net/smtp"
	"net/url"
	"strings"
	"time"
)

// mailer sends the failure email to an account's owner over SMTP
// (MATCHPOINT_SMTP_URL). The notification record is the durable trace; the
// email is sent once, after the transaction that recorded the failure.
type mailer struct {
	addr, host, from string
	auth             smtp.Auth
}

func newMailer(raw string) (*mailer, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "smtp" || u.Host == "" {
		return nil, fmt.Errorf("webhooks: MATCHPOINT_SMTP_URL must look like smtp://user:password@host:587?from=noreply@example.com")
	}
	m := &mailer{addr: u.Host, host: u.Hostname(), from: u.Query().Get("from")}
	if u.Port() == "" {
		m.addr = net.JoinHostPort(u.Hostname(), "25")
	}
	if m.from == "" {
		m.from = "matchpoint@" + m.host
	}
	if u.User != nil {
		pw, _ := u.User.Password()
		m.auth = smtp.PlainAuth("", u.User.Username(), pw, m.host)
	}
	return m, nil
}

// send mails one plain-text message.
func (m *mailer) send(to, subject, body string) error {
	if strings.ContainsAny(to+subject, "\r\n") {
		return fmt.Errorf("webhooks: refusing a header with a line break")
	}
	msg := "From: Matchpoint <" + m.from + ">\r\nTo: " + to + "\r\nSubject: " + subject +
		"\r\nDate: " + time.Now().UTC().Format(time.RFC1123Z) +
		"\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" +
		strings.ReplaceAll(body, "\n", "\r\n") + "\r\n"
	return smtp.SendMail(m.addr, m.auth, m.from, []string{to}, []byte(msg))
}

// tellOwner emails the owner of an endpoint that just became failing.
func (s *Service) tellOwner(f Failing) {
	if s.mail == nil || f.Email == "" {
		return
	}
	body := fmt.Sprintf("Deliveries to your webhook endpoint\n\n    %s\n\nhave failed after every retry (last error: %s).\n"+
		"The endpoint is now marked failing. Matchpoint keeps trying new events; after 5 days without a success it is disabled.\n"+
		"See GET /api/v1/webhooks/%s/deliveries for the delivery log, and retry failed deliveries from there once it is fixed.\n",
		f.URL, f.LastError, f.SubscriptionID)
	if err := s.mail.send(f.Email, "Your Matchpoint webhook endpoint is failing", body); err != nil {
		s.log.Warn("send webhook failure email", "webhook_id", f.SubscriptionID, "error", err.Error())
	}
}
