package e2e

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/store"
)

// openAPIDoc is the part of /openapi.json the documentation tests read.
type openAPIDoc struct {
	Paths map[string]map[string]struct {
		OperationID string `json:"operationId"`
		Summary     string `json:"summary"`
		RequestBody *struct {
			Content map[string]struct {
				Schema struct {
					Ref string `json:"$ref"`
				} `json:"schema"`
			} `json:"content"`
		} `json:"requestBody"`
	} `json:"paths"`
	Components struct {
		Schemas map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"schemas"`
	} `json:"components"`
}

func getOK(t *testing.T, url string) []byte {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	r := do(t, req)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, r.Status, r.Body)
	}
	return r.Body
}

// TestOpenAPINames: schema names are identifiers a client generator can use
// as they are, and every summary is capitalised.
func TestOpenAPINames(t *testing.T) {
	s := apptest.Start(t, store.SQLite)
	var doc openAPIDoc
	if err := json.Unmarshal(getOK(t, s.URL+"/openapi.json"), &doc); err != nil {
		t.Fatal(err)
	}
	ident := regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	for name := range doc.Components.Schemas {
		if !ident.MatchString(name) {
			t.Errorf("schema %q is not a PascalCase identifier", name)
		}
	}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if op.Summary == "" || !unicode.IsUpper([]rune(op.Summary)[0]) {
				t.Errorf("%s %s (%s): summary %q does not start with a capital", method, path, op.OperationID, op.Summary)
			}
		}
	}
	body := doc.Paths["/v1/api-keys"]["post"].RequestBody
	if body == nil || body.Content["application/json"].Schema.Ref != "#/components/schemas/CreateAPIKeyRequest" {
		t.Errorf("create-api-key body: %+v, want CreateAPIKeyRequest", body)
	}
}

// TestAPIReferenceShowsEveryType: /docs shows each type the document names
// with all its fields, and every type it names links to that description.
func TestAPIReferenceShowsEveryType(t *testing.T) {
	s := apptest.Start(t, store.SQLite)
	var doc openAPIDoc
	if err := json.Unmarshal(getOK(t, s.URL+"/openapi.json"), &doc); err != nil {
		t.Fatal(err)
	}
	page := string(getOK(t, s.URL+"/docs"))

	for _, name := range []string{"Profile", "PublicProfile", "ProfilePatch", "PrivacyPatch", "Privacy", "Slot", "APIKey", "CreateAPIKeyRequest", "Problem", "ProblemField"} {
		if _, ok := doc.Components.Schemas[name]; !ok {
			t.Errorf("the OpenAPI document has no schema %s", name)
		}
	}
	for name, schema := range doc.Components.Schemas {
		t.Run(name, func(t *testing.T) {
			start := strings.Index(page, `<article id="schema-`+name+`"`)
			if start < 0 {
				t.Fatalf("/docs does not describe %s", name)
			}
			article := page[start:]
			article = article[:strings.Index(article, "</article>")]
			for prop := range schema.Properties {
				if !strings.Contains(article, "<code>"+prop+"</code>") {
					t.Errorf("/docs shows %s without its field %s:\n%s", name, prop, article)
				}
			}
		})
	}

	// Every in-page link has its target: the types an operation or a field
	// names (Profile, array of Slot, PrivacyPatch, Problem) can be followed.
	ids := map[string]bool{}
	for _, m := range regexp.MustCompile(`id="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		ids[m[1]] = true
	}
	links := regexp.MustCompile(`href="#([^"]+)"`).FindAllStringSubmatch(page, -1)
	linked := map[string]bool{}
	for _, m := range links {
		if !ids[m[1]] {
			t.Errorf("/docs links to #%s, which it does not have", m[1])
		}
		linked[m[1]] = true
	}
	for _, name := range []string{"Profile", "PrivacyPatch", "Slot", "APIKey", "Problem", "Privacy"} {
		if !linked["schema-"+name] {
			t.Errorf("/docs never links to %s", name)
		}
	}
	// The body of PATCH /v1/users/me links its nested types.
	patch := page[strings.Index(page, `<article id="update-me"`):]
	patch = patch[:strings.Index(patch, "</article>")]
	for _, want := range []string{`href="#schema-ProfilePatch"`, `href="#schema-PrivacyPatch"`, `array of <a href="#schema-Slot">`, `href="#schema-Profile"`, `href="#schema-Problem"`} {
		if !strings.Contains(patch, want) {
			t.Errorf("PATCH /v1/users/me lacks %s:\n%s", want, patch)
		}
	}
	// An unnamed response object is shown too: the token set's fields.
	token := page[strings.Index(page, `<article id="oauth-token"`):]
	token = token[:strings.Index(token, "</article>")]
	for _, want := range []string{"<code>access_token</code>", "<code>expires_in</code>", "<code>error_uri</code>"} {
		if !strings.Contains(token, want) {
			t.Errorf("POST /oauth/token does not show %s", want)
		}
	}
}
