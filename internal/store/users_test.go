package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

func TestUsersStore(t *testing.T) {
	testdb.Each(t, func(t *testing.T, _ string, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		svc := users.NewService(store.NewUsers(db), clk)
		u, err := svc.Register(ctx, users.Registration{Email: "Ann@Example.com", Username: "Ann", Password: "correct horse", FirstName: "Ann"})
		if err != nil {
			t.Fatal(err)
		}
		// Email and username are unique case-insensitively, and the error names the field.
		_, err = svc.Register(ctx, users.Registration{Email: "ann@example.COM", Username: "other", Password: "correct horse"})
		if e, ok := apperr.As(err); !ok || e.Kind != apperr.Conflict || e.Param != "email" {
			t.Fatalf("duplicate email: %v", err)
		}
		_, err = svc.Register(ctx, users.Registration{Email: "b@example.com", Username: "ANN", Password: "correct horse"})
		if e, ok := apperr.As(err); !ok || e.Kind != apperr.Conflict || e.Param != "username" {
			t.Fatalf("duplicate username: %v", err)
		}
		if _, err := svc.Login(ctx, "ANN@example.com", "correct horse"); err != nil {
			t.Fatalf("login by email: %v", err)
		}
		if _, err := svc.Login(ctx, "ann", "wrong password"); !apperr.IsKind(err, apperr.Unauthenticated) {
			t.Fatalf("wrong password: %v", err)
		}

		lat, lon, radius := 48.85, 2.35, 40.0
		sp := []string{"Tennis", "ping-pong"}
		lv := map[string]string{"table tennis": "advanced"}
		got, err := svc.Update(ctx, u.ID, users.Patch{Sports: &sp, SkillLevels: &lv,
			Latitude: users.Nullable[float64]{Set: true, Value: lat}, Longitude: users.Nullable[float64]{Set: true, Value: lon},
			TravelRadiusKM: &radius, Availability: &[]users.Slot{{Day: "monday", Start: "18:00", End: "21:00"}}})
		if err != nil {
			t.Fatal(err)
		}
		again, err := svc.Get(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(again.Sports) != 2 || again.Sports[0] != "tennis" || again.Sports[1] != "table tennis" ||
			again.SkillLevels["table tennis"] != "advanced" || *again.Latitude != lat || again.TravelRadiusKM != 40 ||
			len(again.Availability) != 1 || !again.UpdatedAt.Equal(got.UpdatedAt) {
			t.Fatalf("profile did not round-trip: %+v", again)
		}

		if err := svc.Delete(ctx, u.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Get(ctx, u.ID); !apperr.IsKind(err, apperr.NotFound) {
			t.Fatalf("deleted user still readable: %v", err)
		}
		// The email and username are free again.
		if _, err := svc.Register(ctx, users.Registration{Email: "ann@example.com", Username: "ann", Password: "correct horse"}); err != nil {
			t.Fatalf("re-register after delete: %v", err)
		}
		var email, first any
		if err := db.QueryRow(`SELECT email, first_name FROM users WHERE id = $1`, u.ID).Scan(&email, &first); err != nil {
			t.Fatal(err)
		}
		if email != nil || first != "" {
			t.Fatalf("personal data kept after delete: %v %v", email, first)
		}
		evs, err := store.NewOutbox(db).Recorded(ctx, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for _, e := range evs {
			types = append(types, e.Type)
		}
		want := []string{"user.created", "user.updated", "user.deleted", "user.created"}
		if len(types) != len(want) {
			t.Fatalf("outbox = %v, want %v", types, want)
		}
		for i := range want {
			if types[i] != want[i] {
				t.Fatalf("outbox = %v, want %v", types, want)
			}
		}
	})
}
