// Package mail is the service's one way of sending email: SMTP to the relay
// named by MATCHPOINT_SMTP_URL, messages composed as plain text and HTML
// (multipart/alternative). Notifications use it, and so does anything else
// that mails people.
package mail

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"net/url"
	"strings"
	"time"
)

// Options are what the URL does not say.
type Options struct {
	// RootCAs are trusted for the relay's certificate; nil: the system's.
	RootCAs *x509.CertPool
	// Hello is the name given in EHLO; default localhost.
	Hello   string
	Timeout time.Duration // whole conversation; default 30 s
}

// Sender sends through one SMTP relay. It is safe for concurrent use: each
// message is its own connection.
type Sender struct {
	addr, host string
	implicit   bool // smtps: TLS from the first byte
	from       mail.Address
	user, pass string
	tls        *tls.Config
	hello      string
	timeout    time.Duration
}

// Parse reads an SMTP URL: smtp://[user:password@]host[:port][?from=address]
// (port 587 by default, STARTTLS whenever the relay offers it) or
// smtps://... (port 465, TLS from the start). Credentials are only ever sent
// over TLS, or to a relay on loopback.
func Parse(raw string, o Options) (*Sender, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Hostname() == "" {
		return nil, errors.New("mail: the SMTP URL must look like smtp://user:password@host:587?from=noreply@example.com or smtps://...")
	}
	s := &Sender{host: u.Hostname(), implicit: u.Scheme == "smtps", hello: o.Hello, timeout: o.Timeout}
	port := u.Port()
	if port == "" {
		port = map[bool]string{false: "587", true: "465"}[s.implicit]
	}
	s.addr = net.JoinHostPort(s.host, port)
	if u.User != nil {
		s.user = u.User.Username()
		s.pass, _ = u.User.Password()
	}
	from := u.Query().Get("from")
	if from == "" {
		from = "matchpoint@" + s.host
	}
	addr, err := mail.ParseAddress(from)
	if err != nil {
		return nil, fmt.Errorf("mail: from address %q: %w", from, err)
	}
	s.from = mail.Address{Name: "Matchpoint", Address: addr.Address}
	if addr.Name != "" {
		s.from.Name = addr.Name
	}
	s.tls = &tls.Config{ServerName: s.host, RootCAs: o.RootCAs, MinVersion: tls.VersionTLS12}
	if s.hello == "" {
		s.hello = "localhost"
	}
	if s.timeout <= 0 {
		s.timeout = 30 * time.Second
	}
	return s, nil
}

// From is the sender address.
func (s *Sender) From() string { return s.from.Address }

// Message is one email.
type Message struct {
	To      string
	Subject string
	Text    string // the plain-text part, always present
	HTML    string // the HTML part; empty: a plain-text email
	// Headers are added as given, in order (List-Unsubscribe, ...).
	Headers [][2]string
	Date    time.Time
}

// Error is a failure the relay reported. Permanent (5xx) failures will fail
// again; others may pass later.
type Error struct {
	Permanent bool
	Err       error
}

func (e *Error) Error() string { return "mail: " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Permanent reports whether err is a refusal that a retry will not change.
func Permanent(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Permanent
}

// classify wraps an SMTP conversation error.
func classify(err error) error {
	var te *textproto.Error
	if errors.As(err, &te) {
		return &Error{Permanent: te.Code >= 500, Err: err}
	}
	return &Error{Err: err}
}

// Send delivers m to the relay.
func (s *Sender) Send(ctx context.Context, m Message) error {
	body, err := Compose(s.from, m)
	if err != nil {
		return &Error{Permanent: true, Err: err}
	}
	to, err := mail.ParseAddress(m.To)
	if err != nil {
		return &Error{Permanent: true, Err: fmt.Errorf("recipient: %w", err)}
	}
	deadline := time.Now().Add(s.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	d := net.Dialer{Deadline: deadline}
	var conn net.Conn
	if s.implicit {
		conn, err = (&tls.Dialer{NetDialer: &d, Config: s.tls}).DialContext(ctx, "tcp", s.addr)
	} else {
		conn, err = d.DialContext(ctx, "tcp", s.addr)
	}
	if err != nil {
		return &Error{Err: err}
	}
	defer conn.Close()
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	c, err := smtp.NewClient(conn, s.host)
	if err != nil {
		return classify(err)
	}
	defer c.Close()
	if err := c.Hello(s.hello); err != nil {
		return classify(err)
	}
	if !s.implicit {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(s.tls); err != nil {
				return classify(err)
			}
		}
	}
	if s.user != "" {
		// PlainAuth itself refuses to send the password in the clear to a
		// relay that is not on loopback.
		if err := c.Auth(smtp.PlainAuth("", s.user, s.pass, s.host)); err != nil {
			return classify(err)
		}
	}
	if err := c.Mail(s.from.Address); err != nil {
		return classify(err)
	}
	if err := c.Rcpt(to.Address); err != nil {
		return classify(err)
	}
	w, err := c.Data()
	if err != nil {
		return classify(err)
	}
	if _, err := w.Write(body); err != nil {
		return classify(err)
	}
	if err := w.Close(); err != nil {
		return classify(err)
	}
	_ = c.Quit() // the message is accepted once DATA is; a failed QUIT changes nothing
	return nil
}

// Compose renders m as an RFC 5322 message with CRLF line ends.
func Compose(from mail.Address, m Message) ([]byte, error) {
	for _, v := range []string{m.To, m.Subject} {
		if strings.ContainsAny(v, "\r\n") {
			return nil, errors.New("a header holds a line break")
		}
	}
	for _, h := range m.Headers {
		if strings.ContainsAny(h[0]+h[1], "\r\n") || h[0] == "" || strings.ContainsAny(h[0], ": ") {
			return nil, fmt.Errorf("header %q is malformed", h[0])
		}
	}
	if m.Date.IsZero() {
		m.Date = time.Now()
	}
	var b bytes.Buffer
	header := func(k, v string) { b.WriteString(k + ": " + v + "\r\n") }
	header("From", from.String())
	header("To", m.To)
	header("Subject", mime.QEncoding.Encode("utf-8", m.Subject))
	header("Date", m.Date.UTC().Format(time.RFC1123Z))
	header("Message-ID", "<"+randomID()+"@"+domainOf(from.Address)+">")
	header("MIME-Version", "1.0")
	for _, h := range m.Headers {
		header(h[0], h[1])
	}
	if m.HTML == "" {
		header("Content-Type", "text/plain; charset=utf-8")
		header("Content-Transfer-Encoding", "quoted-printable")
		b.WriteString("\r\n")
		if err := writeQP(&b, m.Text); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
	mw := multipart.NewWriter(&b)
	header("Content-Type", `multipart/alternative; boundary="`+mw.Boundary()+`"`)
	b.WriteString("\r\n")
	for _, part := range []struct{ typ, body string }{{"text/plain", m.Text}, {"text/html", m.HTML}} {
		pw, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {part.typ + "; charset=utf-8"},
			"Content-Transfer-Encoding": {"quoted-printable"},
		})
		if err != nil {
			return nil, err
		}
		var pb bytes.Buffer
		if err := writeQP(&pb, part.body); err != nil {
			return nil, err
		}
		if _, err := pw.Write(pb.Bytes()); err != nil {
			return nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeQP writes s quoted-printable with CRLF line ends.
func writeQP(b *bytes.Buffer, s string) error {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
	w := quotedprintable.NewWriter(b)
	if _, err := w.Write([]byte(s)); err != nil {
		return err
	}
	return w.Close()
}

func randomID() string {
	var r [16]byte
	_, _ = rand.Read(r[:])
	return hex.EncodeToString(r[:])
}

func domainOf(addr string) string {
	if i := strings.LastIndexByte(addr, '@'); i >= 0 {
		return addr[i+1:]
	}
	return "matchpoint.invalid"
}
