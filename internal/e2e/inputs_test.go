package e2e

import (
	"strings"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
)

// TestInputErrors: malformed or out-of-bounds input gets a clear error that
// names the field and never shows the service's insides.
func TestInputErrors(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		u := s.User(t, "inputs")
		k := keyOf(t, s.App, u.ID, "read", "write")
		t.Run("null clears what may be cleared", func(t *testing.T) {
			if r := api(t, s, "PATCH", "/v1/users/me", k, `{"latitude":null,"longitude":null}`); r.Status != 200 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
		})
		for _, tc := range []struct {
			name, body string
			status     int
			code       string
			param      string
		}{
			{"a number beyond float64", `{"travel_radius_km":1e400}`, 400, "invalid_json", ""},
			{"a zero travel radius", `{"travel_radius_km":0}`, 422, "validation_failed", "travel_radius_km"},
			{"a travel radius over 1000", `{"travel_radius_km":1000.5}`, 422, "validation_failed", "travel_radius_km"},
			{"null for a string", `{"bio":null}`, 422, "validation_failed", "bio"},
			{"null for a name", `{"first_name":"Ann","last_name":null}`, 422, "validation_failed", "last_name"},
			{"null for an object", `{"privacy":null}`, 422, "validation_failed", "privacy"},
			{"null inside an object", `{"privacy":{"discoverable":null}}`, 422, "validation_failed", "privacy.discoverable"},
			{"null for a list", `{"sports":null}`, 422, "validation_failed", "sports"},
			{"null in a list", `{"sports":["tennis",null]}`, 422, "validation_failed", "sports[1]"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := api(t, s, "PATCH", "/v1/users/me", k, tc.body)
				wantProblem(t, s, r, tc.status, tc.code, tc.param)
				if strings.Contains(string(r.Body), "Go ") || strings.Contains(string(r.Body), "float64") {
					t.Errorf("the error shows Go internals: %s", r.Body)
				}
			})
		}
	})
}
