package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/httpapi"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// key makes an API key for u with scopes.
func key(t *testing.T, s *apptest.Server, u *users.User, scopes ...string) string {
	t.Helper()
	_, k, err := s.App.Keys.Create(context.Background(), apikeys.Spec{UserID: u.ID, Name: "test", Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestAPIKeys(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		u := s.User(t, "keeper")
		k := key(t, s, u, "read", "write")
		if me := decode[httpapi.Profile](t, api(t, s, "GET", "/v1/users/me", k, ""), 200); me.ID != u.ID {
			t.Fatalf("API key call: %+v", me)
		}

		// Create through the API: the key is shown once, then only its hint.
		r := api(t, s, "POST", "/v1/api-keys", k, `{"name":"ci","scopes":["read"]}`)
		created := decode[httpapi.APIKey](t, r, 201)
		newKey, id := created.Key, created.ID
		if !strings.HasPrefix(newKey, "mpk_live_") || r.Header.Get("Location") != "/v1/api-keys/"+id || created.Hint != "mpk_live_..."+newKey[len(newKey)-4:] {
			t.Fatalf("created = %+v (Location %q)", created, r.Header.Get("Location"))
		}
		if api(t, s, "GET", "/v1/users/me", newKey, "").Status != 200 {
			t.Fatal("new key does not work")
		}
		list := api(t, s, "GET", "/v1/api-keys?limit=1", k, "")
		var page struct {
			Object     string           `json:"object"`
			Data       []map[string]any `json:"data"`
			HasMore    bool             `json:"has_more"`
			NextCursor string           `json:"next_cursor"`
		}
		if err := json.Unmarshal(list.Body, &page); err != nil || page.Object != "list" || len(page.Data) != 1 || !page.HasMore || page.NextCursor == "" {
			t.Fatalf("list page 1: %s", list.Body)
		}
		list = api(t, s, "GET", "/v1/api-keys?limit=1&cursor="+page.NextCursor, k, "")
		if err := json.Unmarshal(list.Body, &page); err != nil || len(page.Data) != 1 || page.HasMore || page.Data[0]["id"] != id {
			t.Fatalf("list page 2: %s", list.Body)
		}
		if strings.Contains(string(list.Body), newKey) || page.Data[0]["key"] != nil {
			t.Fatal("a list shows a key")
		}
		if page.Data[0]["last_used_at"] == nil {
			t.Error("last_used_at not recorded")
		}

		// A key cannot be stronger than the credential that makes it.
		wantProblem(t, s, api(t, s, "POST", "/v1/api-keys", newKey, `{"name":"x","scopes":["read"]}`), 403, "insufficient_scope", "")
		wantProblem(t, s, api(t, s, "POST", "/v1/api-keys", k, `{"name":"x","scopes":["events"]}`), 422, "invalid_scope", "scopes")
		wantProblem(t, s, api(t, s, "POST", "/v1/api-keys", k, `{"name":"x","scopes":["admin"]}`), 422, "invalid_scope", "scopes")

		// Revoked: 401 at once.
		if revoked := decode[httpapi.APIKey](t, api(t, s, "DELETE", "/v1/api-keys/"+id, k, ""), 200); revoked.RevokedAt == nil {
			t.Fatalf("revoke: %+v", revoked)
		}
		got := api(t, s, "GET", "/v1/users/me", newKey, "")
		p := wantProblem(t, s, got, 401, "invalid_token", "")
		if p["detail"] != "The API key has been revoked." || !strings.Contains(got.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Fatalf("revoked key: %v %q", p, got.Header.Get("WWW-Authenticate"))
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/api-keys/key_00000000000000000000000000", k, ""), 404, "not_found", "")

		// Another user's keys are invisible.
		other := s.User(t, "stranger")
		wantProblem(t, s, api(t, s, "DELETE", "/v1/api-keys/"+id, key(t, s, other, "read", "write"), ""), 404, "not_found", "")

		// A third-party OAuth app may not mint keys that would outlive its grant.
		f := newFlow(t, s, "appuser", oauth.ClientSpec{OwnerID: other.ID})
		at := str(f.tokens("read write"), "access_token")
		wantProblem(t, s, api(t, s, "POST", "/v1/api-keys", at, `{"name":"sneaky"}`), 403, "forbidden", "")
	})
}

func TestProfiles(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		ann, bob := s.User(t, "ann"), s.User(t, "bob")
		ak, bk := key(t, s, ann, "read", "write", "profile"), key(t, s, bob, "read")

		r := api(t, s, "PATCH", "/v1/users/me", ak, `{"first_name":"Ann","sports":["Tennis","ping-pong","SOCCER"],
			"skill_levels":{"table tennis":"advanced","tennis":"beginner"},"location":"Lyon","latitude":45.76,"longitude":4.84,
			"travel_radius_km":15,"bio":"Weekend player","timezone":"Europe/Paris",
			"availability":[{"day":"saturday","start":"09:00","end":"12:00"}],"privacy":{"show_location":false}}`)
		me := decode[httpapi.Profile](t, r, 200)
		if strings.Join(me.Sports, ",") != "tennis,table tennis,football" || me.Latitude == nil || *me.Latitude != 45.76 || me.TravelRadiusKM != 15 {
			t.Fatalf("patched profile = %+v", me)
		}

		// What bob sees: no email, no coordinates, and no place label (hidden).
		pub := api(t, s, "GET", "/v1/users/"+ann.ID, bk, "")
		if pub.Status != 200 {
			t.Fatalf("public profile: %d %s", pub.Status, pub.Body)
		}
		for _, hidden := range []string{"ann@example.com", "45.76", "Lyon", "latitude", "email"} {
			if strings.Contains(string(pub.Body), hidden) {
				t.Errorf("public profile shows %q: %s", hidden, pub.Body)
			}
		}
		if pm := decode[httpapi.PublicProfile](t, pub, 200); pm.Bio != "Weekend player" || pm.SkillLevels["tennis"] != "beginner" {
			t.Errorf("public profile = %+v", pm)
		}

		// Private: 404 to others, still readable by the owner.
		if r := api(t, s, "PATCH", "/v1/users/me", ak, `{"privacy":{"profile_visibility":"private"}}`); r.Status != 200 {
			t.Fatalf("go private: %d %s", r.Status, r.Body)
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/users/"+ann.ID, bk, ""), 404, "not_found", "")
		if api(t, s, "GET", "/v1/users/"+ann.ID, ak, "").Status != 200 {
			t.Error("owner cannot read own private profile")
		}

		// Validation errors name the field.
		for _, c := range []struct{ body, code, param string }{
			{`{"sports":["tennis","quidditch"]}`, "unknown_sport", "sports[1]"},
			{`{"skill_levels":{"golf":"expert"}}`, "sport_not_in_profile", "skill_levels.golf"},
			{`{"skill_levels":{"tennis":"pro"}}`, "invalid_skill_level", "skill_levels.tennis"},
			{`{"latitude":91,"longitude":0}`, "out_of_range", "latitude"},
			{`{"latitude":null}`, "", ""},
			{`{"longitude":3}`, "incomplete_coordinates", "latitude"},
			{`{"timezone":"Mars/Olympus"}`, "invalid_timezone", "timezone"},
			{`{"availability":[{"day":"monday","start":"20:00","end":"19:00"}]}`, "invalid_time", "availability[0].end"},
			{`{"availability":[{"day":"funday","start":"20:00","end":"21:00"}]}`, "validation_failed", "availability[0].day"},
			{`{"username":"BOB"}`, "username_taken", "username"},
			{`{"username":"admin"}`, "username_reserved", "username"},
			{`{"bio":"` + strings.Repeat("x", 2001) + `"}`, "validation_failed", "bio"},
			{`{"nickname":"x"}`, "unknown_field", "nickname"},
			{`{"travel_radius_km":"far"}`, "validation_failed", "travel_radius_km"},
		} {
			r := api(t, s, "PATCH", "/v1/users/me", ak, c.body)
			if c.code == "" {
				if r.Status != 200 {
					t.Errorf("%s: %d %s", c.body, r.Status, r.Body)
				}
				continue
			}
			status := 422
			if c.code == "username_taken" {
				status = 409
			}
			wantProblem(t, s, r, status, c.code, c.param)
		}

		// A patch that changes nothing records no event.
		before := countEvents(t, s, "user.updated")
		api(t, s, "PATCH", "/v1/users/me", ak, `{"bio":"Weekend player"}`)
		if countEvents(t, s, "user.updated") != before {
			t.Error("a no-op patch recorded user.updated")
		}

		// Deletion needs the profile scope, then erases and revokes.
		wantProblem(t, s, api(t, s, "DELETE", "/v1/users/me", bk, ""), 403, "insufficient_scope", "")
		if r := api(t, s, "DELETE", "/v1/users/me", ak, ""); r.Status != 204 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/users/me", ak, ""), 401, "invalid_token", "")
		wantProblem(t, s, api(t, s, "GET", "/v1/users/"+ann.ID, bk, ""), 404, "not_found", "")
		if _, err := s.App.Users.Login(context.Background(), "ann", apptest.Password); err == nil {
			t.Error("a deleted account can still sign in")
		}
		evs, err := s.App.Outbox.Recorded(context.Background(), 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		var deleted map[string]any
		for _, e := range evs {
			var env map[string]any
			if err := json.Unmarshal(e.Payload, &env); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(str(env, "id"), "whe_") || env["type"] != e.Type || env["created"] == "" {
				t.Errorf("bad envelope %s", e.Payload)
			}
			if e.Type == "user.deleted" {
				deleted = env
			}
		}
		if deleted == nil {
			t.Fatal("no user.deleted event")
		}
		// Erasure reaches the outbox: no event keeps the account's email or name.
		for _, e := range evs {
			if e.UserID == ann.ID && (strings.Contains(string(e.Payload), "ann@example.com") || strings.Contains(string(e.Payload), `"Ann"`)) {
				t.Errorf("%s event still holds personal data: %s", e.Type, e.Payload)
			}
		}
	})
}

func TestVerification(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		ctx := context.Background()
		u := s.User(t, "player")
		uk := key(t, s, u, "read", "write")
		op, err := s.App.Users.Register(ctx, users.Registration{Email: "op@example.com", Username: "opal", Password: apptest.Password, Role: "operator"})
		if err != nil {
			t.Fatal(err)
		}
		if op, err = s.App.Users.SetTier(ctx, op.ID, users.TierEnterprise, nil); err != nil {
			t.Fatal(err)
		}
		ok := key(t, s, op, "read", "admin")
		// An Enterprise customer with admin is not an operator of the service.
		cust := s.User(t, "bigcorp")
		if cust, err = s.App.Users.SetTier(ctx, cust.ID, users.TierEnterprise, nil); err != nil {
			t.Fatal(err)
		}
		ck := key(t, s, cust, "read", "admin")

		wantProblem(t, s, api(t, s, "POST", "/v1/users/me/verification", uk, `{"document_type":"selfie"}`), 422, "validation_failed", "document_type")
		r := api(t, s, "POST", "/v1/users/me/verification", uk, `{"document_type":"passport","note":"renewed last year"}`)
		v := decode[httpapi.Verification](t, r, 201)
		if v.Status != "pending" {
			t.Fatalf("request: %+v", v)
		}
		vid := v.ID
		wantProblem(t, s, api(t, s, "POST", "/v1/users/me/verification", uk, `{"document_type":"passport"}`), 409, "verification_pending", "")

		wantProblem(t, s, api(t, s, "GET", "/v1/verifications?status=pending", uk, ""), 403, "insufficient_scope", "")
		wantProblem(t, s, api(t, s, "POST", "/v1/verifications/"+vid+"/approve", ck, ""), 403, "forbidden", "")
		list := api(t, s, "GET", "/v1/verifications?status=pending", ok, "")
		if list.Status != 200 || !strings.Contains(string(list.Body), vid) {
			t.Fatalf("operator list: %d %s", list.Status, list.Body)
		}
		r = api(t, s, "POST", "/v1/verifications/"+vid+"/approve", ok, `{"note":"looks right"}`)
		if v := decode[httpapi.Verification](t, r, 200); v.Status != "approved" {
			t.Fatalf("approve: %+v", v)
		}
		wantProblem(t, s, api(t, s, "POST", "/v1/verifications/"+vid+"/reject", ok, ""), 409, "already_reviewed", "")
		if me := decode[httpapi.Profile](t, api(t, s, "GET", "/v1/users/me", uk, ""), 200); !me.Verified {
			t.Fatalf("not verified after approval: %+v", me)
		}
		if countEvents(t, s, "user.verified") != 1 {
			t.Fatal("user.verified not recorded once")
		}
		wantProblem(t, s, api(t, s, "POST", "/v1/users/me/verification", uk, `{"document_type":"passport"}`), 409, "already_verified", "")
	})
}

func TestAPIBasics(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		u := s.User(t, "basic")
		k := key(t, s, u, "read", "write")

		// Malformed, mistyped and oversized bodies are 4xx naming what is wrong.
		wantProblem(t, s, api(t, s, "PATCH", "/v1/users/me", k, `{"bio": "unterminated`), 400, "invalid_json", "")
		req, _ := http.NewRequest("PATCH", s.URL+"/v1/users/me", strings.NewReader(`{"bio":"x"}`))
		req.Header.Set("Authorization", "Bearer "+k)
		req.Header.Set("Content-Type", "text/xml")
		wantProblem(t, s, do(t, req), 415, "unsupported_media_type", "")
		big := `{"bio":"` + strings.Repeat("x", 1<<20) + `"}`
		wantProblem(t, s, api(t, s, "PATCH", "/v1/users/me", k, big), 413, "body_too_large", "")
		req, _ = http.NewRequest("POST", s.URL+"/v1/api-keys", strings.NewReader(big))
		req.Header.Set("Authorization", "Bearer "+k)
		req.Header.Set("Idempotency-Key", "big")
		wantProblem(t, s, do(t, req), 413, "body_too_large", "")
		// No body, no Content-Type needed.
		if r := api(t, s, "GET", "/v1/sports", k, ""); r.Status != 200 || !strings.Contains(string(r.Body), `"table tennis"`) {
			t.Fatalf("sports: %d %s", r.Status, r.Body)
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/nothing-here", k, ""), 404, "not_found", "")
		r := api(t, s, "PUT", "/v1/users/me", k, "")
		wantProblem(t, s, r, 405, "method_not_allowed", "")
		if r.Header.Get("Allow") != "GET, PATCH, DELETE" {
			t.Errorf("Allow = %q", r.Header.Get("Allow"))
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/users/me", "", ""), 401, "unauthenticated", "")
		wantProblem(t, s, api(t, s, "GET", "/v1/users/me", "mpa_nonsense", ""), 401, "invalid_token", "")
		wantProblem(t, s, api(t, s, "GET", "/v1/api-keys?limit=500", k, ""), 422, "validation_failed", "limit")

		// Idempotency-Key: a retry replays, another body with the same key is refused.
		post := func(idem, body string) resp {
			req, _ := http.NewRequest("POST", s.URL+"/v1/api-keys", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+k)
			req.Header.Set("Content-Type", "application/json")
			if idem != "" {
				req.Header.Set("Idempotency-Key", idem)
			}
			return do(t, req)
		}
		first, again := post("k-1", `{"name":"once"}`), post("k-1", `{"name":"once"}`)
		fk, ak := decode[httpapi.APIKey](t, first, 201), decode[httpapi.APIKey](t, again, 201)
		if fk.ID != ak.ID || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %s / %s", first.Body, again.Body)
		}
		// The key itself is shown once and never stored: the replay omits it.
		secret := fk.Key
		if secret == "" || ak.Key != "" || strings.Contains(string(again.Body), secret) {
			t.Fatalf("replayed creation shows the key: %s", again.Body)
		}
		var stored int
		if err := s.App.DB.QueryRow(`SELECT COUNT(*) FROM idempotency_keys WHERE body LIKE $1`, "%"+secret+"%").Scan(&stored); err != nil || stored != 0 {
			t.Fatalf("the API key is stored in %d idempotency records (%v)", stored, err)
		}
		wantProblem(t, s, post("k-1", `{"name":"twice"}`), 409, "idempotency_key_reused", "Idempotency-Key")
		if a, b := post("", `{"name":"n"}`), post("", `{"name":"n"}`); decode[httpapi.APIKey](t, a, 201).ID == decode[httpapi.APIKey](t, b, 201).ID {
			t.Fatal("requests without a key were deduplicated")
		}
		// Keys expire after 24 hours.
		s.Clock.Advance(25 * time.Hour)
		if r := post("k-1", `{"name":"twice"}`); r.Status != 201 {
			t.Fatalf("expired idempotency key still held: %d %s", r.Status, r.Body)
		}

		// Operational endpoints and documents.
		for path, want := range map[string]string{
			"/healthz": `"ok"`, "/readyz": `"database":"ok"`, "/metrics": "matchpoint_http_requests_total",
			"/openapi.json": `"openapi": "3.1`, "/docs": "/v1/users/me", "/docs/errors": `id="invalid_grant"`,
		} {
			res, err := http.Get(s.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 || !strings.Contains(string(b), want) || res.Header.Get("Request-Id") == "" {
				t.Errorf("%s: %d, has %q: %v", path, res.StatusCode, want, strings.Contains(string(b), want))
			}
		}
		// The OpenAPI document states the scopes of each operation.
		var doc struct {
			Paths map[string]map[string]struct {
				Security []map[string][]string `json:"security"`
			} `json:"paths"`
		}
		res, _ := http.Get(s.URL + "/openapi.json")
		if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if sec := doc.Paths["/v1/users/me"]["patch"].Security; len(sec) == 0 || sec[0]["oauth2"][0] != "write" {
			t.Errorf("PATCH /v1/users/me security = %v", sec)
		}
		if _, ok := doc.Paths["/oauth/token"]["post"]; !ok {
			t.Error("the OAuth token endpoint is not documented")
		}
	})
}

func TestSignupPage(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		br := s.NewBrowser(t)
		p := br.Get(s.URL + "/signup")
		form := p.Form(t, "/signup")
		p = br.Submit(form, map[string]string{"email": "new@example.com", "username": "newbie", "password": "short"})
		if p.Status != 422 || !strings.Contains(p.Body, "12 to 256 characters") {
			t.Fatalf("short password: %d", p.Status)
		}
		p = br.Submit(form, map[string]string{"email": "new@example.com", "username": "newbie", "password": apptest.Password, "first_name": "New"})
		if p.Status != 200 {
			t.Fatalf("signup: %d %s", p.Status, p.Body)
		}
		if _, err := s.App.Users.Login(context.Background(), "NEW@example.com", apptest.Password); err != nil {
			t.Fatalf("signed-up account cannot sign in: %v", err)
		}
		if countEvents(t, s, "user.created") == 0 {
			t.Fatal("signup recorded no user.created")
		}
		// Signing up signed the browser in: the forms it had before are stale.
		if p := br.Submit(form, map[string]string{"email": "NEW@example.com", "username": "other", "password": apptest.Password}); p.Status != 403 {
			t.Fatalf("a form from before sign-in: %d", p.Status)
		}
		form = br.Get(s.URL+"/signup").Form(t, "/signup")
		p = br.Submit(form, map[string]string{"email": "NEW@example.com", "username": "other", "password": apptest.Password})
		if p.Status != 409 || !strings.Contains(p.Body, "already exists") {
			t.Fatalf("duplicate email: %d", p.Status)
		}
		// A signed-in browser goes straight to consent.
		c, _ := s.Client(t, oauth.ClientSpec{RedirectURIs: []string{"http://127.0.0.1:9/callback"}})
		_, ch := pkce()
		p = br.Get(authURL(s, c, "read", "s", ch))
		p.Form(t, "/oauth/authorize")
		// return_to never leaves the site.
		p = br.Get(s.URL + "/login?" + url.Values{"return_to": {"//evil.example/x"}}.Encode())
		if f := p.Form(t, "/login"); f.Fields.Get("return_to") != "/docs" {
			t.Fatalf("return_to = %q", f.Fields.Get("return_to"))
		}
	})
}

func countEvents(t *testing.T, s *apptest.Server, typ string) int {
	t.Helper()
	evs, err := s.App.Outbox.Recorded(context.Background(), 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

func TestCORS(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		k := key(t, s, s.User(t, "browser"), "read")
		// Preflight: answered before authentication.
		for _, path := range []string{"/v1/users/me", "/oauth/token"} {
			req, _ := http.NewRequest("OPTIONS", s.URL+path, nil)
			req.Header.Set("Origin", "https://spa.example")
			req.Header.Set("Access-Control-Request-Method", "POST")
			req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
			r := do(t, req)
			if r.Status != 204 || r.Header.Get("Access-Control-Allow-Origin") != "*" ||
				!strings.Contains(r.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
				t.Fatalf("preflight %s: %d %v", path, r.Status, r.Header)
			}
		}
		req, _ := http.NewRequest("GET", s.URL+"/v1/users/me", nil)
		req.Header.Set("Origin", "https://spa.example")
		req.Header.Set("Authorization", "Bearer "+k)
		r := do(t, req)
		if r.Status != 200 || r.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), "Request-Id") {
			t.Fatalf("API response: %d %v", r.Status, r.Header)
		}
		// The cookie-based pages are not readable cross-origin.
		req, _ = http.NewRequest("GET", s.URL+"/login", nil)
		req.Header.Set("Origin", "https://spa.example")
		if r := do(t, req); r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatal("the sign-in page allows cross-origin reads")
		}
	})
}
