package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// fuzzServer is a server the fuzz targets send every input to.
type fuzzServer struct {
	engine store.Dialect
	s      *apptest.Server
	key    string // a broad API key of the user "fuzzer"
}

// startFuzzServers starts one server per engine.
func startFuzzServers(f *testing.F) []fuzzServer {
	var out []fuzzServer
	for _, d := range testdb.Engines() {
		s := apptest.Start(f, d)
		fuzzer := s.User(f, "fuzzer")
		// Fuzzing sends far more than a Free account's hourly requests on a
		// clock that does not move.
		huge := int64(1 << 40)
		if _, err := s.App.Users.SetTier(context.Background(), fuzzer.ID, users.TierEnterprise, &huge); err != nil {
			f.Fatal(err)
		}
		out = append(out, fuzzServer{engine: d, s: s, key: keyFor(f, s, fuzzer)})
	}
	return out
}

// FuzzJSONBody sends arbitrary bodies to the JSON endpoints of the API, on a
// real server and database of each engine (PostgreSQL refuses NUL and
// invalid UTF-8 that SQLite takes): whatever the bytes, the answer is a
// success or a 4xx problem, never a 5xx, and the server keeps serving.
func FuzzJSONBody(f *testing.F) {
	for _, seed := range []string{
		`{"first_name":"Ann","sports":["Tennis"],"skill_levels":{"tennis":"expert"}}`,
		`{"latitude":null,"longitude":null}`, `{"latitude":1e400}`, `{"availability":[{"day":"monday","start":"24:00","end":"23:59"}]}`,
		`{"privacy":{"profile_visibility":"members","discoverable":false}}`, `{"sports":[1,2]}`, `{"bio":"\u0000"}`,
		`[]`, `null`, `"x"`, `{"a":` + strings.Repeat("[", 5000), `{"username":"ann","username":"bob"}`, "\xff\xfe",
		`{"name":"k","scopes":["read","read"]}`, `{"document_type":"passport","note":"` + strings.Repeat("é", 600) + `"}`,
		`{"name":"a\u0000b"}`, "{\"name\":\"caf\xe9\"}", `{"note":"\u0000","document_type":"passport"}`,
		"{\"first_name\":\"\xed\xa0\x80\"}", `{"skill_levels":{"\u0000":"expert"}}`, `{"name":"\ud800"}`,
	} {
		f.Add(0, seed)
		f.Add(1, seed)
		f.Add(2, seed)
	}
	// One server per engine and fuzzing process: starting one per input
	// would measure start-up, not the API.
	servers := startFuzzServers(f)
	f.Fuzz(func(t *testing.T, target int, body string) {
		method, path := "PATCH", "/v1/users/me"
		switch uint(target) % 3 {
		case 1:
			method, path = "POST", "/v1/api-keys"
		case 2:
			method, path = "POST", "/v1/users/me/verification"
		}
		for _, fs := range servers {
			s := fs.s
			req, _ := http.NewRequest(method, s.URL+path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+fs.key)
			req.Header.Set("Content-Type", "application/json")
			r := do(t, req)
			if r.Status >= 500 {
				t.Fatalf("%s: %s %s with %q: %d %s", fs.engine, method, path, body, r.Status, r.Body)
			}
			if r.Status >= 400 && r.Header.Get("Content-Type") != "application/problem+json" {
				t.Fatalf("%s: %d without a problem body: %s", fs.engine, r.Status, r.Body)
			}
			if got := api(t, s, "GET", "/v1/users/me", fs.key, ""); got.Status != 200 {
				t.Fatalf("%s: server stopped serving after %q: %d %s", fs.engine, body, got.Status, got.Body)
			}
		}
	})
}
