package apptest

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/notify"
)

// Notify writes a notification for userID through the seam every domain
// uses (addNotification, in a transaction of its own), as a domain's change
// would, and returns it with the id and count it ended up with.
func (s *Server) Notify(t testing.TB, userID, kind, title, body, collapseKey string, data map[string]string) *notify.Notification {
	t.Helper()
	n := notify.New(s.Clock.Now(), userID, kind, title, body, data)
	n.CollapseKey = collapseKey
	if err := s.App.NotificationStore.AddNotifications(context.Background(), []*notify.Notification{n}); err != nil {
		t.Fatal(err)
	}
	return n
}

// SendNotifications runs worker passes until no job is due, and returns how
// many jobs were sent.
func (s *Server) SendNotifications(t testing.TB) int {
	t.Helper()
	total := 0
	for {
		n, err := s.App.NotificationWorker.RunOnce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return total
		}
		total += n
	}
}

// PendingNotificationJobs counts queued push and email jobs.
func (s *Server) PendingNotificationJobs(t testing.TB) int64 {
	t.Helper()
	n, err := s.App.NotificationStore.PendingJobs(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// CAFile writes certs to a PEM file for MATCHPOINT_WEBHOOK_CA_FILE, so the
// service trusts test servers (httptest's TLS servers share one certificate).
func CAFile(t testing.TB, certs ...*x509.Certificate) string {
	t.Helper()
	var b []byte
	for _, c := range certs {
		b = append(b, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
	}
	p := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
