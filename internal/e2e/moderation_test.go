package e2e

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/events"
	"github.com/matchpoint-api/matchpoint/internal/httpapi"
	"github.com/matchpoint-api/matchpoint/internal/matching"
	"github.com/matchpoint-api/matchpoint/internal/notify"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// Texts the engine decides as their names say (the engine's own tests cover why).
const (
	threatText   = "I will find where you live and hurt you"
	selfHarmText = "I want to kill myself, nothing matters anymore"
	scamReview   = "Pay the fee by gift card to join, send the card number to me"
	phoneText    = "Call me at 06 12 34 56 78 for tennis"
	sportsText   = "Tennis fan, love a good kill shot at the net"
)

func wantAlpha(t *testing.T, r resp) {
	t.Helper()
	if got := r.Header.Get("Matchpoint-Maturity"); got != "alpha" {
		t.Errorf("Matchpoint-Maturity = %q, want alpha", got)
	}
}

// TestModerationCheck: the engine's answer through the API, for any
// credential with read; ALPHA header on every answer.
func TestModerationCheck(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		u := s.User(t, "checker")
		k := s.Key(t, u, "read")
		r := api(t, s, "POST", "/v1/moderation/check", k, `{"text":"`+threatText+`","context":"message"}`)
		wantAlpha(t, r)
		got := decode[httpapi.ModerationResult](t, r, 200)
		if got.Decision != "block" || !has(got.Flagged, "threat") || got.Categories["threat"] < 0.5 || len(got.Spans) == 0 || got.Language != "en" {
			t.Fatalf("threat: %+v", got)
		}
		if len(got.Categories) != 11 {
			t.Errorf("categories = %v, want all 11", got.Categories)
		}
		got = decode[httpapi.ModerationResult](t, api(t, s, "POST", "/v1/moderation/check", k, `{"text":"`+selfHarmText+`"}`), 200)
		if got.Decision != "review" || got.Support == nil || len(got.Support.Resources) == 0 {
			t.Fatalf("self-harm: %+v", got)
		}
		got = decode[httpapi.ModerationResult](t, api(t, s, "POST", "/v1/moderation/check", k, `{"text":"`+sportsText+`","context":"profile"}`), 200)
		if got.Decision != "allow" || len(got.Flagged) != 0 {
			t.Fatalf("sports talk: %+v", got)
		}
		wantAlpha(t, wantProblemResp(t, s, api(t, s, "POST", "/v1/moderation/check", k, `{"text":"hi","context":"chat"}`), 422, "validation_failed", "context"))
		wantProblem(t, s, api(t, s, "POST", "/v1/moderation/check", s.Key(t, u, "events"), `{"text":"hi"}`), 403, "insufficient_scope", "")
		wantProblem(t, s, api(t, s, "POST", "/v1/moderation/check", "", `{"text":"hi"}`), 401, "unauthenticated", "")

		// The OpenAPI document describes every operation of the family.
		doc := api(t, s, "GET", "/openapi.json", "", "").JSON(t)
		paths, _ := doc["paths"].(map[string]any)
		for path, method := range map[string]string{
			"/v1/moderation/check": "post", "/v1/reports": "post", "/v1/moderation/cases": "get", "/v1/moderation/cases/{id}": "get",
			"/v1/moderation/cases/{id}/decision": "post", "/v1/moderation/audit": "get", "/v1/moderation/decisions": "get",
			"/v1/moderation/decisions/{id}/appeal": "post",
		} {
			op, _ := paths[path].(map[string]any)[method].(map[string]any)
			if op == nil || op["description"] == "" || op["security"] == nil {
				t.Errorf("OpenAPI lacks %s %s: %v", method, path, paths[path])
			}
		}
	})
}

func wantProblemResp(t *testing.T, s *apptest.Server, r resp, status int, code, param string) resp {
	t.Helper()
	wantProblem(t, s, r, status, code, param)
	return r
}

// openCases lists the open cases of the queue.
func openCases(t *testing.T, s *apptest.Server, opKey, query string) []httpapi.ModerationCase {
	t.Helper()
	r := api(t, s, "GET", "/v1/moderation/cases?status=open"+query, opKey, "")
	wantAlpha(t, r)
	return decode[httpapi.List[httpapi.ModerationCase]](t, r, 200).Data
}

func caseFor(cs []httpapi.ModerationCase, targetID string) *httpapi.ModerationCase {
	for i := range cs {
		if cs[i].TargetID == targetID {
			return &cs[i]
		}
	}
	return nil
}

func audit(t *testing.T, s *apptest.Server, opKey, subject string) []httpapi.ModerationDecision {
	t.Helper()
	return decode[httpapi.List[httpapi.ModerationDecision]](t, api(t, s, "GET", "/v1/moderation/audit?subject_id="+subject, opKey, ""), 200).Data
}

// TestModerationScreensProfilesAndEvents: block refuses with 422
// content_blocked, the reason and the flagged categories; review saves and
// queues a case; warn saves; every decision but allow is recorded with the
// engine's version.
func TestModerationScreensProfilesAndEvents(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		_, op := s.Operator(t, "mod")
		u := s.User(t, "writer")
		k := eventsKey(t, s, u)

		p := wantProblem(t, s, api(t, s, "PATCH", "/v1/users/me", k, `{"bio":"`+threatText+`"}`), 422, "content_blocked", "bio")
		if fl, _ := p["flagged"].([]any); len(fl) == 0 || fl[0] != "threat" || !strings.Contains(p["detail"].(string), "not accepted") {
			t.Fatalf("blocked bio: %v", p)
		}
		if me := decode[httpapi.Profile](t, api(t, s, "GET", "/v1/users/me", k, ""), 200); me.Bio != "" {
			t.Fatalf("a blocked bio was saved: %q", me.Bio)
		}
		wantProblem(t, s, api(t, s, "PATCH", "/v1/users/me", k, `{"first_name":"`+threatText+`"}`), 422, "content_blocked", "first_name")

		// warn: saved, recorded, no case.
		if me := decode[httpapi.Profile](t, api(t, s, "PATCH", "/v1/users/me", k, `{"bio":"`+phoneText+`"}`), 200); me.Bio != phoneText {
			t.Fatalf("warned bio not saved: %q", me.Bio)
		}
		if caseFor(openCases(t, s, op, ""), u.ID) != nil {
			t.Fatal("a warning opened a case")
		}
		// review (self-harm): saved, and a case about the profile.
		decode[httpapi.Profile](t, api(t, s, "PATCH", "/v1/users/me", k, `{"bio":"`+selfHarmText+`"}`), 200)
		c := caseFor(openCases(t, s, op, ""), u.ID)
		if c == nil || c.TargetType != "user" || c.SubjectID != u.ID || !has(c.Reasons, "self_harm") || !c.Automated ||
			c.Evidence["bio"] != selfHarmText || c.ReportCount != 0 || c.RiskScore <= 0 {
			t.Fatalf("profile case: %+v", c)
		}

		// Events: block on create and update, review on create.
		full := map[string]any{"title": "Doubles", "description": threatText, "sport": "tennis", "location": "Parc de la Tête d'Or, Lyon",
			"date": at(s.Clock.Now().Add(48 * time.Hour)), "max_participants": 4}
		wantProblem(t, s, api(t, s, "POST", "/v1/events", k, jsonBody(t, full)), 422, "content_blocked", "description")
		full["description"] = scamReview
		ev := decode[httpapi.SportsEvent](t, api(t, s, "POST", "/v1/events", k, jsonBody(t, full)), 201)
		ec := caseFor(openCases(t, s, op, ""), ev.ID)
		if ec == nil || ec.TargetType != "event" || !has(ec.Reasons, "scam") || ec.Evidence["description"] != scamReview {
			t.Fatalf("event case: %+v", ec)
		}
		wantProblem(t, s, api(t, s, "PATCH", "/v1/events/"+ev.ID, k, `{"title":"`+threatText+`"}`), 422, "content_blocked", "title")
		if got := getEvent(t, s, k, ev.ID); got.Title != "Doubles" {
			t.Fatalf("blocked title saved: %q", got.Title)
		}
		wantProblem(t, s, api(t, s, "PATCH", "/v1/events/"+ev.ID+"/series", k, `{"title":"`+threatText+`"}`), 422, "content_blocked", "title")
		// Sports talk goes through untouched.
		decode[httpapi.SportsEvent](t, api(t, s, "PATCH", "/v1/events/"+ev.ID, k, `{"description":"`+sportsText+`"}`), 200)

		// The audit log: each engine decision with its version.
		var actions []string
		for _, d := range audit(t, s, op, u.ID) {
			if !d.Automated || d.ActorID != nil || d.EngineVersion == "" {
				t.Errorf("engine decision without its marks: %+v", d)
			}
			actions = append(actions, d.Action)
		}
		want := []string{"block", "block", "review", "block", "review", "warn", "block", "block"}
		if strings.Join(actions, " ") != strings.Join(want, " ") {
			t.Fatalf("audit actions = %v, want %v", actions, want)
		}
	})
}

// TestReports: what a caller may report, the evidence kept, one report per
// case and reporter, blocking in the same step, and the queue's access.
func TestReports(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		ctx := context.Background()
		opUser, op := s.Operator(t, "mod")
		bad := s.User(t, "troll")
		s.Profile(t, bad, users.Patch{Bio: ptr("hello there")})
		a, b := s.User(t, "alice"), s.User(t, "bob")
		ka, kb := s.Key(t, a, "read", "write"), s.Key(t, b, "read", "write")
		hidden := s.User(t, "hermit")
		s.Profile(t, hidden, users.Patch{Privacy: &users.PrivacyPatch{ProfileVisibility: ptr(users.VisibilityPrivate)}})

		r := api(t, s, "POST", "/v1/reports", ka, `{"target_type":"user","target_id":"`+bad.ID+`","reason":"harassment","details":"insults in chat"}`)
		wantAlpha(t, r)
		rep := decode[httpapi.ReportOut](t, r, 201)
		if !strings.HasPrefix(rep.ID, "rpt_") || rep.Status != "open" || rep.Reason != "harassment" || rep.TargetID != bad.ID {
			t.Fatalf("report: %+v", rep)
		}
		wantProblem(t, s, api(t, s, "POST", "/v1/reports", ka, `{"target_type":"user","target_id":"`+bad.ID+`","reason":"spam"}`), 409, "already_reported", "target_id")
		wantProblem(t, s, api(t, s, "POST", "/v1/reports", ka, `{"target_type":"user","target_id":"`+hidden.ID+`","reason":"spam"}`), 404, "not_found", "")
		wantProblem(t, s, api(t, s, "POST", "/v1/reports", ka, `{"target_type":"user","target_id":"`+a.ID+`","reason":"spam"}`), 422, "cannot_report_self", "target_id")
		wantProblem(t, s, api(t, s, "POST", "/v1/reports", ka, `{"target_type":"user","target_id":"`+bad.ID+`","reason":"rude"}`), 422, "validation_failed", "reason")
		wantProblem(t, s, api(t, s, "POST", "/v1/reports", s.Key(t, a, "read"), `{"target_type":"user","target_id":"`+bad.ID+`","reason":"spam"}`), 403, "insufficient_scope", "")

		// The author edits the profile; the evidence stays as reported.
		s.Profile(t, bad, users.Patch{Bio: ptr("all nice now")})
		// A second reporter joins the case and blocks in the same step.
		decode[httpapi.ReportOut](t, api(t, s, "POST", "/v1/reports", kb, `{"target_type":"user","target_id":"`+bad.ID+`","reason":"threat","block":true}`), 201)
		if blocked, err := s.App.Matching.Relations().Blocked(ctx, b.ID, bad.ID); err != nil || !blocked {
			t.Fatalf("block with the report: %v %v", blocked, err)
		}
		cs := openCases(t, s, op, "")
		c := caseFor(cs, bad.ID)
		if c == nil || c.ReportCount != 2 || !has(c.Reasons, "harassment") || !has(c.Reasons, "threat") || c.Evidence["bio"] != "hello there" || c.Automated {
			t.Fatalf("case: %+v", c)
		}
		one := decode[httpapi.ModerationCase](t, api(t, s, "GET", "/v1/moderation/cases/"+c.ID, op, ""), 200)
		if len(one.Reports) != 2 || one.Reports[0].Details != "insults in chat" {
			t.Fatalf("case reports: %+v", one.Reports)
		}

		// Events: one hidden from the reporter is a 404.
		host := s.User(t, "host")
		pub := s.Event(t, host, events.Draft{})
		priv := s.Event(t, host, events.Draft{Visibility: "invite_only"})
		decode[httpapi.ReportOut](t, api(t, s, "POST", "/v1/reports", ka, `{"target_type":"event","target_id":"`+pub.ID+`","reason":"spam"}`), 201)
		wantProblem(t, s, api(t, s, "POST", "/v1/reports", ka, `{"target_type":"event","target_id":"`+priv.ID+`","reason":"spam"}`), 404, "not_found", "")
		if ec := caseFor(openCases(t, s, op, ""), pub.ID); ec == nil || ec.SubjectID != host.ID || ec.Evidence["title"] != pub.Title {
			t.Fatalf("event case: %+v", ec)
		}

		// Order: higher risk first (threat + harassment above one spam report).
		cs = openCases(t, s, op, "")
		for i := 1; i < len(cs); i++ {
			if cs[i].RiskScore > cs[i-1].RiskScore {
				t.Fatalf("queue not ordered by risk: %+v", cs)
			}
		}
		// Pages with the cursor cover the queue once.
		p1 := decode[httpapi.List[httpapi.ModerationCase]](t, api(t, s, "GET", "/v1/moderation/cases?status=open&limit=1", op, ""), 200)
		p2 := decode[httpapi.List[httpapi.ModerationCase]](t, api(t, s, "GET", "/v1/moderation/cases?status=open&limit=1&cursor="+p1.NextCursor, op, ""), 200)
		if !p1.HasMore || len(p2.Data) != 1 || p2.Data[0].ID != cs[1].ID || p1.Data[0].ID != cs[0].ID {
			t.Fatalf("pages: %+v / %+v", p1, p2)
		}

		// Who may read the queue.
		wantProblem(t, s, api(t, s, "GET", "/v1/moderation/cases", ka, ""), 403, "insufficient_scope", "")
		cust := s.User(t, "bigcorp")
		if _, err := s.App.Users.SetTier(ctx, cust.ID, users.TierEnterprise, nil); err != nil {
			t.Fatal(err)
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/moderation/cases", s.Key(t, cust, "read", "admin"), ""), 403, "forbidden", "")
		wantProblem(t, s, api(t, s, "GET", "/v1/moderation/audit", s.Key(t, cust, "read", "admin"), ""), 403, "forbidden", "")
		wantProblem(t, s, api(t, s, "GET", "/v1/moderation/cases/cas_nope", op, ""), 404, "not_found", "")
		_ = opUser
	})
}

// decide posts a decision and returns it.
func decide(t *testing.T, s *apptest.Server, opKey, caseID, body string) httpapi.ModerationDecision {
	t.Helper()
	r := api(t, s, "POST", "/v1/moderation/cases/"+caseID+"/decision", opKey, body)
	wantAlpha(t, r)
	return decode[httpapi.ModerationDecision](t, r, 200)
}

func reportUser(t *testing.T, s *apptest.Server, key, typ, id, reason string) {
	t.Helper()
	decode[httpapi.ReportOut](t, api(t, s, "POST", "/v1/reports", key, `{"target_type":"`+typ+`","target_id":"`+id+`","reason":"`+reason+`"}`), 201)
}

// TestModerationDecisionActions: dismiss, remove_content, release and
// warn_user each take effect at once, close the case, and send the
// affected user a statement of reasons.
func TestModerationDecisionActions(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		opUser, op := s.Operator(t, "mod")
		rep := s.User(t, "reporter")
		kr := eventsKey(t, s, rep)
		author := s.User(t, "author")
		ka := eventsKey(t, s, author)

		// remove_content on a profile clears its bio.
		s.Profile(t, author, users.Patch{Bio: ptr("my bio")})
		reportUser(t, s, kr, "user", author.ID, "fake_profile")
		c := caseFor(openCases(t, s, op, ""), author.ID)
		wantProblem(t, s, api(t, s, "POST", "/v1/moderation/cases/"+c.ID+"/decision", op, `{"action":"remove_content"}`), 422, "validation_failed", "reason")
		wantProblem(t, s, api(t, s, "POST", "/v1/moderation/cases/"+c.ID+"/decision", op, `{"action":"warn_user","reason":"x","duration_hours":3}`), 422, "validation_failed", "duration_hours")
		wantProblem(t, s, api(t, s, "POST", "/v1/moderation/cases/"+c.ID+"/decision", op, `{"action":"ban","reason":"x"}`), 422, "validation_failed", "action")
		d := decide(t, s, op, c.ID, `{"action":"remove_content","reason":"impersonation in the bio"}`)
		if d.Action != "remove_content" || d.Automated || d.ActorID == nil || *d.ActorID != opUser.ID || d.CaseID == nil || *d.CaseID != c.ID {
			t.Fatalf("decision: %+v", d)
		}
		if me := decode[httpapi.Profile](t, api(t, s, "GET", "/v1/users/me", ka, ""), 200); me.Bio != "" {
			t.Fatalf("bio after remove_content: %q", me.Bio)
		}
		wantProblem(t, s, api(t, s, "POST", "/v1/moderation/cases/"+c.ID+"/decision", op, `{"action":"dismiss","reason":"again"}`), 409, "case_closed", "")
		closed := decode[httpapi.ModerationCase](t, api(t, s, "GET", "/v1/moderation/cases/"+c.ID, op, ""), 200)
		if closed.Status != "closed" || closed.ClosedAt == nil {
			t.Fatalf("case after decision: %+v", closed)
		}
		ns := apptest.Notifications(t, s.App.DB, author.ID, notify.KindModerationDecision)
		if len(ns) != 1 || !strings.Contains(ns[0].Body, "impersonation in the bio") || !strings.Contains(ns[0].Body, "Your content was removed") ||
			!strings.Contains(ns[0].Body, "no automated means") || !strings.Contains(ns[0].Body, "/appeal") ||
			ns[0].Data["decision_id"] != d.ID || ns[0].Data["automated_detection"] != "false" || ns[0].Data["appeal_until"] == "" {
			t.Fatalf("statement of reasons: %+v", ns)
		}

		// remove_content on an event cancels it; its attendees hear of it.
		ev := newEvent(t, s, ka, map[string]any{"title": "Sunday doubles"})
		rsvp(t, s, kr, ev.ID, "going")
		reportUser(t, s, kr, "event", ev.ID, "scam")
		c = caseFor(openCases(t, s, op, ""), ev.ID)
		decide(t, s, op, c.ID, `{"action":"remove_content","reason":"asks for payment off the platform"}`)
		if got := getEvent(t, s, ka, ev.ID); got.Status != "cancelled" {
			t.Fatalf("event after remove_content: %s", got.Status)
		}

		// release: a review-held event's case, with an automated flag.
		full := map[string]any{"description": scamReview}
		ev2 := newEvent(t, s, ka, full)
		c = caseFor(openCases(t, s, op, ""), ev2.ID)
		d = decide(t, s, op, c.ID, `{"action":"release","reason":"a club fee, paid at the club"}`)
		if got := getEvent(t, s, ka, ev2.ID); got.Status != "scheduled" || got.Description != scamReview {
			t.Fatalf("event after release: %+v", got)
		}
		ns = apptest.Notifications(t, s.App.DB, author.ID, notify.KindModerationDecision)
		if last := ns[len(ns)-1]; last.Data["decision_id"] != d.ID || last.Data["automated_detection"] != "true" ||
			!strings.Contains(last.Body, "automated detection") || last.Data["appeal_until"] != "" {
			t.Fatalf("release statement: %+v", last)
		}

		// warn_user and dismiss.
		other := s.User(t, "other")
		reportUser(t, s, kr, "user", other.ID, "spam")
		c = caseFor(openCases(t, s, op, ""), other.ID)
		decide(t, s, op, c.ID, `{"action":"warn_user","reason":"repeated advertising"}`)
		if ns := apptest.Notifications(t, s.App.DB, other.ID, notify.KindModerationDecision); len(ns) != 1 || !strings.Contains(ns[0].Body, "warning") {
			t.Fatalf("warning: %+v", ns)
		}
		reportUser(t, s, kr, "user", other.ID, "other")
		c = caseFor(openCases(t, s, op, ""), other.ID)
		decide(t, s, op, c.ID, `{"action":"dismiss","reason":"nothing against the rules"}`)
		if ns := apptest.Notifications(t, s.App.DB, other.ID, notify.KindModerationDecision); len(ns) != 2 || !strings.Contains(ns[1].Body, "No action") {
			t.Fatalf("dismissal: %+v", ns)
		}

		// An operator never decides a case about themselves.
		reportUser(t, s, kr, "user", opUser.ID, "spam")
		c = caseFor(openCases(t, s, op, ""), opUser.ID)
		wantProblem(t, s, api(t, s, "POST", "/v1/moderation/cases/"+c.ID+"/decision", op, `{"action":"dismiss","reason":"mine"}`), 403, "forbidden", "")

		// The audit log has every human decision with who and when.
		n := 0
		for _, d := range decode[httpapi.List[httpapi.ModerationDecision]](t, api(t, s, "GET", "/v1/moderation/audit?limit=100", op, ""), 200).Data {
			if !d.Automated {
				n++
				if d.ActorID == nil || *d.ActorID != opUser.ID || d.CreatedAt == "" {
					t.Errorf("audit entry: %+v", d)
				}
			}
		}
		if n != 5 {
			t.Fatalf("human decisions in the audit log: %d, want 5", n)
		}
	})
}

// TestSuspension: suspend_user refuses every credential of the account
// (API key, OAuth access token, refresh token, the sign-in page, the
// session), releases its pending requests and event places, and the
// account works again, intact, when the suspension ends.
func TestSuspension(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		ctx := context.Background()
		_, op := s.Operator(t, "mod")
		rep := s.User(t, "reporter")
		kr := eventsKey(t, s, rep)
		bad := s.User(t, "spammer")
		kb := eventsKey(t, s, bad)
		c, secret := s.Client(t, oauth.ClientSpec{RedirectURIs: []string{"https://app.example/cb"}})
		ts := s.Token(t, bad, c, secret, "read")

		// A browser session signed in before the suspension.
		br := s.NewBrowser(t)
		authz := authURL(s, c, "read", "st", "")
		br.Submit(br.Get(authz).Form(t, "/login"), map[string]string{"login": "spammer", "password": apptest.Password})
		if hasLoginForm(br.Get(authz)) {
			t.Fatal("not signed in before the suspension")
		}
		// Pending requests both ways, and places at an event with a waitlist.
		tennis := users.Patch{Sports: &[]string{"tennis"}}
		s.Profile(t, bad, tennis)
		sent := s.Match(t, bad, s.Profile(t, s.User(t, "target1"), tennis), false)
		got := s.Match(t, s.Profile(t, s.User(t, "suitor"), tennis), bad, false)
		host := s.User(t, "host")
		ev := s.Event(t, host, events.Draft{MaxParticipants: 1})
		rsvp(t, s, kb, ev.ID, "going")
		if w := rsvp(t, s, kr, ev.ID, "going"); w.Status != "waitlisted" {
			t.Fatalf("reporter: %s", w.Status)
		}

		reportUser(t, s, kr, "user", bad.ID, "spam")
		cs := caseFor(openCases(t, s, op, ""), bad.ID)
		d := decide(t, s, op, cs.ID, `{"action":"suspend_user","reason":"mass advertising","duration_hours":48}`)
		if d.EndsAt == nil {
			t.Fatalf("decision: %+v", d)
		}
		end := *d.EndsAt

		// API key and access token: 403 account_suspended with the end.
		for name, cred := range map[string]string{"api key": kb, "access token": ts.AccessToken} {
			p := wantProblem(t, s, api(t, s, "GET", "/v1/users/me", cred, ""), 403, "account_suspended", "")
			if p["suspended_until"] != end {
				t.Errorf("%s: suspended_until = %v, want %s", name, p["suspended_until"], end)
			}
		}
		// Refresh token: refused, and still usable after.
		r := postForm(t, s, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {ts.RefreshToken},
			"client_id": {c.ID}, "client_secret": {secret}})
		if r.Status != 400 || r.JSON(t)["error"] != "invalid_grant" || !strings.Contains(r.JSON(t)["error_description"].(string), "suspended") {
			t.Fatalf("refresh while suspended: %d %s", r.Status, r.Body)
		}
		// The session is gone, and signing in says why.
		page := br.Get(authz)
		if !hasLoginForm(page) {
			t.Fatalf("the session survived the suspension: %s", page.Body)
		}
		page = br.Submit(page.Form(t, "/login"), map[string]string{"login": "spammer", "password": apptest.Password})
		if page.Status != http.StatusForbidden || !strings.Contains(page.Body, "suspended until") {
			t.Fatalf("sign-in while suspended: %d %s", page.Status, page.Body)
		}
		// Pending requests and places were released; the waitlist moved up.
		for _, m := range []*matching.Match{sent, got} {
			if m2, err := s.App.Matching.Get(ctx, m.User2ID, m.ID); err != nil || m2.Status == matching.StatusPending {
				t.Fatalf("match %s after suspension: %+v %v", m.ID, m2, err)
			}
		}
		if my, err := s.App.Events.MyRSVP(ctx, rep.ID, ev.ID); err != nil || my.Status != "going" {
			t.Fatalf("waitlist after suspension: %+v %v", my, err)
		}
		// The profile is out of sight meanwhile.
		wantProblem(t, s, api(t, s, "GET", "/v1/users/"+bad.ID, kr, ""), 404, "not_found", "")
		// What a suspended account may still do: read its decisions.
		mine := decode[httpapi.List[httpapi.ModerationDecision]](t, api(t, s, "GET", "/v1/moderation/decisions", kb, ""), 200)
		if len(mine.Data) != 1 || mine.Data[0].ID != d.ID {
			t.Fatalf("own decisions: %+v", mine)
		}

		// The suspension ends: everything works again, the profile intact.
		s.Clock.Advance(49 * time.Hour)
		if me := decode[httpapi.Profile](t, api(t, s, "GET", "/v1/users/me", kb, ""), 200); me.Username != "spammer" {
			t.Fatalf("after the suspension: %+v", me)
		}
		r = postForm(t, s, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {ts.RefreshToken},
			"client_id": {c.ID}, "client_secret": {secret}})
		fresh := decode[oauth.TokenSet](t, r, 200)
		decode[httpapi.Profile](t, api(t, s, "GET", "/v1/users/me", fresh.AccessToken, ""), 200)
		decode[httpapi.PublicProfile](t, api(t, s, "GET", "/v1/users/"+bad.ID, kr, ""), 200)
	})
}

// TestSuspendFromTerminalAndLift: a suspension without an end holds until
// lifted; the problem then carries no end time.
func TestSuspendFromTerminalAndLift(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		ctx := context.Background()
		u := s.User(t, "longban")
		k := s.Key(t, u, "read")
		if _, err := s.App.Moderation.Suspend(ctx, u.ID, nil, "fraud"); err != nil {
			t.Fatal(err)
		}
		p := wantProblem(t, s, api(t, s, "GET", "/v1/users/me", k, ""), 403, "account_suspended", "")
		if _, ok := p["suspended_until"]; ok {
			t.Fatalf("an open-ended suspension has an end: %v", p)
		}
		s.Clock.Advance(24 * 365 * time.Hour)
		wantProblem(t, s, api(t, s, "GET", "/v1/users/me", k, ""), 403, "account_suspended", "")
		if lifted, err := s.App.Moderation.Unsuspend(ctx, u.ID, "cleared"); err != nil || !lifted {
			t.Fatalf("lift: %v %v", lifted, err)
		}
		decode[httpapi.Profile](t, api(t, s, "GET", "/v1/users/me", k, ""), 200)
		if lifted, _ := s.App.Moderation.Unsuspend(ctx, u.ID, "again"); lifted {
			t.Fatal("lifted twice")
		}
	})
}

// TestAppeals: the affected user appeals within six months (also while
// suspended); only another operator than the one who decided resolves it;
// release reverses a suspension.
func TestAppeals(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		op1User, op1 := s.Operator(t, "mod1")
		op2User, op2 := s.Operator(t, "mod2")
		rep := s.User(t, "reporter")
		kr := s.Key(t, rep, "read", "write")
		bad := s.User(t, "accused")
		kb := s.Key(t, bad, "read", "write")

		reportUser(t, s, kr, "user", bad.ID, "harassment")
		c := caseFor(openCases(t, s, op1, ""), bad.ID)
		d := decide(t, s, op1, c.ID, `{"action":"suspend_user","reason":"insults"}`)
		wantProblem(t, s, api(t, s, "GET", "/v1/users/me", kb, ""), 403, "account_suspended", "")

		wantProblem(t, s, api(t, s, "POST", "/v1/moderation/decisions/"+d.ID+"/appeal", kr, `{"details":"not me"}`), 404, "not_found", "")
		wantProblem(t, s, api(t, s, "POST", "/v1/moderation/decisions/"+d.ID+"/appeal", kb, `{"details":""}`), 422, "validation_failed", "details")
		r := api(t, s, "POST", "/v1/moderation/decisions/"+d.ID+"/appeal", kb, `{"details":"I was quoting them"}`)
		wantAlpha(t, r)
		ap := decode[httpapi.Appeal](t, r, 201)
		if !strings.HasPrefix(ap.ID, "cas_") || ap.DecisionID != d.ID || ap.Status != "open" {
			t.Fatalf("appeal: %+v", ap)
		}
		wantProblem(t, s, api(t, s, "POST", "/v1/moderation/decisions/"+d.ID+"/appeal", kb, `{"details":"again"}`), 409, "already_appealed", "")
		appeals := openCases(t, s, op2, "&kind=appeal")
		if len(appeals) != 1 || appeals[0].ID != ap.ID || appeals[0].Kind != "appeal" || appeals[0].Details != "I was quoting them" || appeals[0].DecisionID != d.ID {
			t.Fatalf("appeal in the queue: %+v", appeals)
		}
		// The operator who decided may not resolve it; nor may anyone with
		// an action other than dismiss or release.
		wantProblem(t, s, api(t, s, "POST", "/v1/moderation/cases/"+ap.ID+"/decision", op1, `{"action":"release","reason":"fine"}`), 403, "same_operator", "")
		wantProblem(t, s, api(t, s, "POST", "/v1/moderation/cases/"+ap.ID+"/decision", op2, `{"action":"warn_user","reason":"fine"}`), 422, "validation_failed", "action")
		res := decide(t, s, op2, ap.ID, `{"action":"release","reason":"the context shows a quote"}`)
		if *res.ActorID != op2User.ID || *res.ActorID == op1User.ID {
			t.Fatalf("appeal decision: %+v", res)
		}
		decode[httpapi.Profile](t, api(t, s, "GET", "/v1/users/me", kb, ""), 200)
		ns := apptest.Notifications(t, s.App.DB, bad.ID, notify.KindModerationDecision)
		if len(ns) != 2 || !strings.Contains(ns[1].Body, "appeal was upheld") {
			t.Fatalf("appeal outcome: %+v", ns)
		}

		// A warning appealed after six months is too late; a dismissal
		// cannot be appealed.
		reportUser(t, s, kr, "user", bad.ID, "spam")
		c = caseFor(openCases(t, s, op1, "&kind=content"), bad.ID)
		w := decide(t, s, op1, c.ID, `{"action":"warn_user","reason":"spam"}`)
		reportUser(t, s, kr, "user", bad.ID, "other")
		c = caseFor(openCases(t, s, op1, "&kind=content"), bad.ID)
		dis := decide(t, s, op1, c.ID, `{"action":"dismiss","reason":"fine"}`)
		wantProblem(t, s, api(t, s, "POST", "/v1/moderation/decisions/"+dis.ID+"/appeal", kb, `{"details":"?"}`), 409, "not_appealable", "")
		s.Clock.Advance(185 * 24 * time.Hour)
		wantProblem(t, s, api(t, s, "POST", "/v1/moderation/decisions/"+w.ID+"/appeal", kb, `{"details":"late"}`), 409, "appeal_window_closed", "")
	})
}

// TestAppealWhileSuspendedAndUpheldDismissal: the appeal endpoint is open to
// a suspended account; an appeal dismissed keeps the suspension.
func TestAppealWhileSuspended(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		_, op1 := s.Operator(t, "mod1")
		_, op2 := s.Operator(t, "mod2")
		kr := s.Key(t, s.User(t, "reporter"), "read", "write")
		bad := s.User(t, "accused")
		c, secret := s.Client(t, oauth.ClientSpec{RedirectURIs: []string{"https://app.example/cb"}})
		tok := s.Token(t, bad, c, secret, "read", "write").AccessToken
		reportUser(t, s, kr, "user", bad.ID, "threat")
		cs := caseFor(openCases(t, s, op1, ""), bad.ID)
		d := decide(t, s, op1, cs.ID, `{"action":"suspend_user","reason":"threats","duration_hours":720}`)
		wantProblem(t, s, api(t, s, "POST", "/v1/reports", tok, `{"target_type":"user","target_id":"`+bad.ID+`","reason":"spam"}`), 403, "account_suspended", "")
		ap := decode[httpapi.Appeal](t, api(t, s, "POST", "/v1/moderation/decisions/"+d.ID+"/appeal", tok, `{"details":"please"}`), 201)
		decide(t, s, op2, ap.ID, `{"action":"dismiss","reason":"the threats are clear"}`)
		wantProblem(t, s, api(t, s, "GET", "/v1/users/me", tok, ""), 403, "account_suspended", "")
		ns := apptest.Notifications(t, s.App.DB, bad.ID, notify.KindModerationDecision)
		if len(ns) != 2 || !strings.Contains(ns[1].Body, "appeal was rejected") {
			t.Fatalf("appeal outcome: %+v", ns)
		}
	})
}

// TestBehaviourSignals: reports and blocks against one user and links by a
// new account raise the user's risk and open a case past the threshold;
// counts leave with the window (the service's clock).
func TestBehaviourSignals(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		ctx := context.Background()
		_, op := s.Operator(t, "mod")
		target := s.User(t, "target")
		blocked := s.User(t, "blocked")
		newbie := s.User(t, "newbie")
		s.Profile(t, newbie, users.Patch{Bio: ptr("see https://example.com/deal")})
		for i, name := range []string{"reporter1", "reporter2"} {
			r := s.User(t, name)
			reportUser(t, s, s.Key(t, r, "read", "write"), "user", target.ID, []string{"spam", "other"}[i])
		}
		for _, name := range []string{"blocker1", "blocker2", "blocker3", "blocker4", "blocker5"} {
			if _, err := s.App.Matching.Block(ctx, s.User(t, name).ID, blocked.ID); err != nil {
				t.Fatal(err)
			}
		}
		sg, err := s.App.Moderation.ComputeSignals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		by := map[string]map[string]int{}
		risk := map[string]float64{}
		for _, g := range sg {
			by[g.UserID], risk[g.UserID] = g.Counts, g.RiskScore
		}
		if by[target.ID]["reports_against"] != 2 || by[blocked.ID]["blocks_against"] != 5 || by[newbie.ID]["new_account_links"] != 1 {
			t.Fatalf("signals: %v", by)
		}
		// Two of three reports: below the threshold, some risk, no signal case.
		if risk[target.ID] <= 0 || risk[target.ID] >= s.App.Moderation.Settings().CaseRisk {
			t.Fatalf("target risk %v", risk[target.ID])
		}
		cs := openCases(t, s, op, "")
		if c := caseFor(cs, blocked.ID); c == nil || !has(c.Reasons, "signal:blocks_against") || !c.Automated || c.SubjectRiskScore < 0.6 {
			t.Fatalf("blocks case: %+v", c)
		}
		if c := caseFor(cs, target.ID); c == nil || has(c.Reasons, "signal:reports_against") || c.SubjectRiskScore != round3(risk[target.ID]) {
			t.Fatalf("target case: %+v", c)
		}
		// The third reporter crosses the threshold.
		reportUser(t, s, s.Key(t, s.User(t, "reporter3"), "read", "write"), "user", target.ID, "spam")
		if _, err := s.App.Moderation.ComputeSignals(ctx); err != nil {
			t.Fatal(err)
		}
		if c := caseFor(openCases(t, s, op, ""), target.ID); c == nil || !has(c.Reasons, "signal:reports_against") {
			t.Fatalf("target case after the third report: %+v", c)
		}
		// A person looked at the blocked user: the same signals do not
		// reopen a case within the window.
		bc := caseFor(openCases(t, s, op, ""), blocked.ID)
		decide(t, s, op, bc.ID, `{"action":"dismiss","reason":"blocked after a quarrel, nothing more"}`)
		if _, err := s.App.Moderation.ComputeSignals(ctx); err != nil {
			t.Fatal(err)
		}
		if c := caseFor(openCases(t, s, op, ""), blocked.ID); c != nil {
			t.Fatalf("a dismissed signal case reopened: %+v", c)
		}
		// The window passes: the counts and the risk go.
		s.Clock.Advance(25 * time.Hour)
		sg, err = s.App.Moderation.ComputeSignals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(sg) != 0 {
			t.Fatalf("signals after the window: %+v", sg[0])
		}
		if c := caseFor(openCases(t, s, op, ""), target.ID); c == nil || c.SubjectRiskScore != 0 {
			t.Fatalf("risk after the window: %+v", c)
		}
	})
}

func round3(f float64) float64 { return float64(int(f*1000+0.5)) / 1000 }

// TestModerationErasure: an erased account's texts leave the cases and
// reports about it; the decisions stay in the audit log.
func TestModerationErasure(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		ctx := context.Background()
		_, op := s.Operator(t, "mod")
		bad := s.User(t, "leaving")
		s.Profile(t, bad, users.Patch{Bio: ptr("a bio worth reporting")})
		kr := s.Key(t, s.User(t, "reporter"), "read", "write")
		decode[httpapi.ReportOut](t, api(t, s, "POST", "/v1/reports", kr, `{"target_type":"user","target_id":"`+bad.ID+`","reason":"spam","details":"ads"}`), 201)
		c := caseFor(openCases(t, s, op, ""), bad.ID)
		d := decide(t, s, op, c.ID, `{"action":"warn_user","reason":"ads in the bio"}`)
		if err := s.App.Users.Delete(ctx, bad.ID); err != nil {
			t.Fatal(err)
		}
		got := decode[httpapi.ModerationCase](t, api(t, s, "GET", "/v1/moderation/cases/"+c.ID, op, ""), 200)
		if len(got.Evidence) != 0 || got.Reports[0].Details != "" {
			t.Fatalf("texts of an erased account kept: %+v", got)
		}
		if a := audit(t, s, op, bad.ID); len(a) != 1 || a[0].ID != d.ID {
			t.Fatalf("audit after erasure: %+v", a)
		}
	})
}

// TestSuspendedLeaveRecommendations: a suspended account is not recommended
// until its suspension ends.
func TestSuspendedLeaveRecommendations(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		ctx := context.Background()
		me := s.Player(t, "seeker", tennis("intermediate", parisLat, parisLon))
		other := s.Player(t, "partner", tennis("advanced", parisLat+0.02, parisLon))
		tok := keyOf(t, s.App, me.ID, "matching", "read", "write")
		found := func() bool { return has(foundIDs(find(t, s, tok, `{}`)), other.ID) }
		if !found() {
			t.Fatal("not recommended before")
		}
		end := s.Clock.Now().Add(time.Hour)
		if _, err := s.App.Moderation.Suspend(ctx, other.ID, &end, "test"); err != nil {
			t.Fatal(err)
		}
		if found() {
			t.Fatal("a suspended account is recommended")
		}
		s.Clock.Advance(2 * time.Hour)
		if !found() {
			t.Fatal("not recommended after the suspension")
		}
	})
}

// TestStreamEndsWithSuspension: an open real-time stream of an account
// suspended meanwhile ends at its next heartbeat; reconnecting is refused.
func TestStreamEndsWithSuspension(t *testing.T) {
	for _, d := range testdb.Engines() {
		t.Run(string(d), func(t *testing.T) {
			s := apptest.StartWith(t, d, apptest.Options{Configure: func(c *config.Config, _ *app.Options) {
				c.Stream.Heartbeat = 100 * time.Millisecond
			}})
			ann := s.User(t, "ann")
			k := s.Key(t, ann, "read")
			c := openSSE(t, s.URL, "/v1/stream", k)
			if _, err := s.App.Moderation.Suspend(context.Background(), ann.ID, nil, "test"); err != nil {
				t.Fatal(err)
			}
			deadline := time.After(10 * time.Second)
			for ended := false; !ended; {
				select {
				case m, ok := <-c.msgs:
					if !ok {
						ended = true
					} else if !m.Comment {
						t.Fatalf("event %s after the suspension", m.ID)
					}
				case <-deadline:
					t.Fatal("the stream stayed open 10 s after the suspension")
				}
			}
			wantProblem(t, s, api(t, s, http.MethodGet, "/v1/stream", k, ""), http.StatusForbidden, "account_suspended", "")
		})
	}
}
