package apptest

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/events"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// Event creates a sports event by creator through the domain, filling what
// d leaves out: a title, tennis, a place in Lyon, two days from the fake
// clock's now, ten places.
func (s *Server) Event(t testing.TB, creator *users.User, d events.Draft) *events.Event {
	t.Helper()
	if d.Title == "" {
		d.Title = "Evening tennis"
	}
	if d.Sport == "" {
		d.Sport = "tennis"
	}
	if d.Location == "" {
		d.Location = "Parc de la Tête d'Or, Lyon"
	}
	if d.Date.IsZero() {
		d.Date = s.Clock.Now().Add(48 * time.Hour).Truncate(time.Second)
	}
	if d.MaxParticipants == 0 {
		d.MaxParticipants = 10
	}
	e, err := s.App.Events.Create(context.Background(), creator.ID, d)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Notification is a notification record as tests look at it.
type Notification struct {
	ID    string
	Kind  string
	Title string
	Body  string
	Data  map[string]string
}

// Notifications lists a user's notification records of one kind (every
// kind when kind is ""), oldest first. The notification centre's API comes
// later; the records are what every domain writes today.
func Notifications(t testing.TB, db *store.DB, userID, kind string) []Notification {
	t.Helper()
	rows, err := db.DB.QueryContext(context.Background(), `SELECT id, kind, title, body, data FROM notifications
		WHERE user_id = $1 AND ($2 = '' OR kind = $2) ORDER BY id`, userID, kind)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []Notification
	for rows.Next() {
		var n Notification
		var data string
		if err := rows.Scan(&n.ID, &n.Kind, &n.Title, &n.Body, &data); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(data), &n.Data); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Users registers n accounts named prefix0, prefix1... on a (a test
// server's or a cluster's App), a few at a time: password hashing is the
// slow part.
func Users(t testing.TB, a interface {
	Register(context.Context, users.Registration) (*users.User, error)
}, prefix string, n int) []*users.User {
	t.Helper()
	out := make([]*users.User, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 4)
	for i := range n {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			name := prefix + strconv.Itoa(i)
			u, err := a.Register(context.Background(), users.Registration{Email: name + "@example.com", Username: name, Password: Password, FirstName: name})
			out[i] = u
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	return out
}
