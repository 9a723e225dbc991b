package apptest

import (
	"bufio"
	"crypto/tls"
	"encoding/base64"
	"net"
	"strings"
	"sync"
	"testing"
)

// SMTPServer is a small SMTP listener for tests: it speaks enough of RFC
// 5321 for a real client (EHLO, optional STARTTLS, AUTH PLAIN, MAIL, RCPT,
// DATA, RSET, QUIT) and keeps every message it accepts.
type SMTPServer struct {
	Addr string
	// TLS, when set before the first connection, offers STARTTLS with it
	// (or, with Implicit, speaks TLS from the first byte).
	TLS      *tls.Config
	Implicit bool
	// User and Password, when set, are required (AUTH PLAIN).
	User, Password string

	ln   net.Listener
	mu   sync.Mutex
	msgs []SMTPMessage
	// refuse answers RCPT with this reply when set ("550 5.1.1 no such user").
	refuse string
	wg     sync.WaitGroup
}

// SMTPMessage is one accepted message.
type SMTPMessage struct {
	From string
	To   []string
	Data string // as sent, CRLF line ends, dot-stuffing undone
	TLS  bool   // the session was encrypted
	Auth string // the user that authenticated
}

// StartSMTP listens on loopback until the test ends.
func StartSMTP(t testing.TB, configure ...func(*SMTPServer)) *SMTPServer {
	t.Helper()
	s := &SMTPServer{}
	for _, c := range configure {
		c(s)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if s.Implicit && s.TLS != nil {
		ln = tls.NewListener(ln, s.TLS)
	}
	s.ln, s.Addr = ln, ln.Addr().String()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.session(c)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

// Refuse makes RCPT answer reply (empty: accept again).
func (s *SMTPServer) Refuse(reply string) {
	s.mu.Lock()
	s.refuse = reply
	s.mu.Unlock()
}

// Messages returns the messages accepted so far.
func (s *SMTPServer) Messages() []SMTPMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SMTPMessage(nil), s.msgs...)
}

func (s *SMTPServer) session(c net.Conn) {
	defer c.Close()
	_, secure := c.(*tls.Conn)
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	reply := func(lines ...string) bool {
		for _, l := range lines {
			w.WriteString(l + "\r\n")
		}
		return w.Flush() == nil
	}
	reply("220 smtp.test ESMTP")
	var msg SMTPMessage
	authed := s.User == ""
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO", "HELO":
			lines := []string{"250-smtp.test"}
			if s.TLS != nil && !secure {
				lines = append(lines, "250-STARTTLS")
			}
			if s.User != "" {
				lines = append(lines, "250-AUTH PLAIN")
			}
			reply(append(lines, "250 8BITMIME")...)
		case "STARTTLS":
			if s.TLS == nil || secure {
				reply("502 5.5.1 no")
				continue
			}
			reply("220 2.0.0 go ahead")
			tc := tls.Server(c, s.TLS)
			if tc.Handshake() != nil {
				return
			}
			c, secure = tc, true
			r, w = bufio.NewReader(c), bufio.NewWriter(c)
		case "AUTH":
			mech, resp, _ := strings.Cut(arg, " ")
			raw, err := base64.StdEncoding.DecodeString(resp)
			parts := strings.Split(string(raw), "\x00")
			if strings.ToUpper(mech) != "PLAIN" || err != nil || len(parts) != 3 || parts[1] != s.User || parts[2] != s.Password {
				reply("535 5.7.8 authentication failed")
				continue
			}
			authed, msg.Auth = true, parts[1]
			reply("235 2.7.0 ok")
		case "MAIL":
			if !authed {
				reply("530 5.7.0 authentication required")
				continue
			}
			msg.From = angle(arg)
			reply("250 2.1.0 ok")
		case "RCPT":
			s.mu.Lock()
			refuse := s.refuse
			s.mu.Unlock()
			if refuse != "" {
				reply(refuse)
				continue
			}
			msg.To = append(msg.To, angle(arg))
			reply("250 2.1.5 ok")
		case "DATA":
			if len(msg.To) == 0 {
				reply("554 5.5.1 no recipients")
				continue
			}
			reply("354 end with .")
			var b strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				b.WriteString(strings.TrimPrefix(l, "."))
			}
			msg.Data, msg.TLS = b.String(), secure
			s.mu.Lock()
			s.msgs = append(s.msgs, msg)
			s.mu.Unlock()
			msg = SMTPMessage{Auth: msg.Auth}
			reply("250 2.0.0 queued")
		case "RSET":
			msg = SMTPMessage{Auth: msg.Auth}
			reply("250 ok")
		case "NOOP":
			reply("250 ok")
		case "QUIT":
			reply("221 bye")
			return
		default:
			reply("502 5.5.2 unknown command")
		}
	}
}

// angle returns the address between < and > of a MAIL or RCPT argument.
func angle(arg string) string {
	i, j := strings.IndexByte(arg, '<'), strings.IndexByte(arg, '>')
	if i < 0 || j < i {
		return ""
	}
	return arg[i+1 : j]
}
