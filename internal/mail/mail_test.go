package mail_test

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"mime"
	"mime/multipart"
	"net/http/httptest"
	netmail "net/mail"
	"strings"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/mail"
)

// testTLS borrows httptest's self-signed certificate for 127.0.0.1.
func testTLS(t *testing.T) (*tls.Config, *x509.CertPool) {
	srv := httptest.NewUnstartedServer(nil)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return &tls.Config{Certificates: srv.TLS.Certificates}, pool
}

var msg = mail.Message{
	To: "nina@example.com", Subject: "Ann sent you a message – tennis?",
	Text: "Ann: are you free at 6?\n\nUnsubscribe: https://m.example/u", HTML: "<p>Ann: are you free at 6?</p>",
	Headers: [][2]string{{"List-Unsubscribe", "<https://m.example/u>"}, {"List-Unsubscribe-Post", "List-Unsubscribe=One-Click"}},
	Date:    time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
}

// parts reads a multipart/alternative message into its content types and
// decoded bodies.
func parts(t *testing.T, data string) (*netmail.Message, map[string]string) {
	t.Helper()
	m, err := netmail.ReadMessage(strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type %q: %v", m.Header.Get("Content-Type"), err)
	}
	out := map[string]string{}
	mr := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := mr.NextPart() // decodes quoted-printable
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(p)
		ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		out[ct] = string(b)
	}
	return m, out
}

func TestSendPlainRelay(t *testing.T) {
	srv := apptest.StartSMTP(t)
	s, err := mail.Parse("smtp://"+srv.Addr+"?from=noreply@matchpoint.test", mail.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(t.Context(), msg); err != nil {
		t.Fatal(err)
	}
	got := srv.Messages()
	if len(got) != 1 || got[0].From != "noreply@matchpoint.test" || got[0].To[0] != "nina@example.com" {
		t.Fatalf("messages %+v", got)
	}
	m, body := parts(t, got[0].Data)
	dec := new(mime.WordDecoder)
	subject, _ := dec.DecodeHeader(m.Header.Get("Subject"))
	if subject != msg.Subject || m.Header.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" ||
		m.Header.Get("From") != `"Matchpoint" <noreply@matchpoint.test>` || m.Header.Get("Message-Id") == "" {
		t.Errorf("headers %v (subject %q)", m.Header, subject)
	}
	if body["text/plain"] != strings.ReplaceAll(msg.Text, "\n", "\r\n") || body["text/html"] != msg.HTML {
		t.Errorf("parts %q", body)
	}
}

func TestSendSTARTTLSWithAuth(t *testing.T) {
	cfg, pool := testTLS(t)
	srv := apptest.StartSMTP(t, func(s *apptest.SMTPServer) { s.TLS, s.User, s.Password = cfg, "mailer", "s3cret pass" })
	s, err := mail.Parse("smtp://mailer:s3cret%20pass@"+srv.Addr, mail.Options{RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(t.Context(), msg); err != nil {
		t.Fatal(err)
	}
	if got := srv.Messages(); len(got) != 1 || !got[0].TLS || got[0].Auth != "mailer" {
		t.Fatalf("messages %+v", got)
	}
	// Without trusting the relay's certificate, nothing is sent.
	s, _ = mail.Parse("smtp://mailer:s3cret%20pass@"+srv.Addr, mail.Options{})
	if err := s.Send(t.Context(), msg); err == nil || mail.Permanent(err) {
		t.Errorf("untrusted relay: %v", err)
	}
}

func TestSendImplicitTLS(t *testing.T) {
	cfg, pool := testTLS(t)
	srv := apptest.StartSMTP(t, func(s *apptest.SMTPServer) { s.TLS, s.Implicit = cfg, true })
	s, err := mail.Parse("smtps://"+srv.Addr, mail.Options{RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(t.Context(), msg); err != nil {
		t.Fatal(err)
	}
	if got := srv.Messages(); len(got) != 1 || !got[0].TLS {
		t.Fatalf("messages %+v", got)
	}
}

func TestRefusals(t *testing.T) {
	srv := apptest.StartSMTP(t)
	s, _ := mail.Parse("smtp://"+srv.Addr, mail.Options{})
	srv.Refuse("550 5.1.1 no such user")
	if err := s.Send(t.Context(), msg); !mail.Permanent(err) {
		t.Errorf("550: %v, want a permanent error", err)
	}
	srv.Refuse("451 4.3.0 try later")
	if err := s.Send(t.Context(), msg); err == nil || mail.Permanent(err) {
		t.Errorf("451: %v, want a temporary error", err)
	}
	srv.Refuse("")
	bad := msg
	bad.Subject = "hi\r\nBcc: everyone@example.com"
	if err := s.Send(t.Context(), bad); !mail.Permanent(err) {
		t.Errorf("header injection: %v", err)
	}
	// Malformed URLs are refused when the service starts.
	for _, raw := range []string{"http://host", "smtp://", "smtp://host?from=not an address"} {
		if _, err := mail.Parse(raw, mail.Options{}); err == nil {
			t.Errorf("%q accepted", raw)
		}
	}
	if len(srv.Messages()) != 0 {
		t.Errorf("refused messages were kept: %d", len(srv.Messages()))
	}
}
