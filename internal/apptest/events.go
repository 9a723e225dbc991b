package apptest

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/auth"
	"github.com/matchpoint-api/matchpoint/internal/events"
	"github.com/matchpoint-api/matchpoint/internal/ids"
	"github.com/matchpoint-api/matchpoint/internal/secrets"
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

// Users makes n accounts named prefix0, prefix1... on a (a test server's or
// a cluster's App) directly in the store, all with Password: hashing it once
// instead of n times keeps tests that need hundreds of people quick. They
// record no user.created event.
func Users(t testing.TB, a *app.App, prefix string, n int) []*users.User {
	t.Helper()
	hash := secrets.HashPassword(Password)
	st := store.NewUsers(a.DB)
	now := a.Clock.Now()
	out := make([]*users.User, n)
	for i := range n {
		name := prefix + strconv.Itoa(i)
		u := &users.User{ID: ids.New(ids.User), Email: name + "@example.com", EmailKey: name + "@example.com", Username: name, UsernameKey: name, FirstName: name,
			Sports: []string{}, SkillLevels: map[string]string{}, Availability: []users.Slot{},
			TravelRadiusKM: users.DefaultTravelRadiusKM, Timezone: "UTC", Privacy: users.DefaultPrivacy,
			Role: auth.RoleMember, Tier: users.TierFree, PasswordHash: hash, CreatedAt: now, UpdatedAt: now}
		if err := st.CreateUser(context.Background(), u, nil); err != nil {
			t.Fatal(err)
		}
		out[i] = u
	}
	return out
}
