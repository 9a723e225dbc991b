package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedFilesAreCurrent fails when the committed generated files
// differ from what this checkout's OpenAPI document gives: a change to the
// API must come with `go run ./clients/gen`.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	out := t.TempDir()
	if err := run("", out); err != nil {
		t.Fatal(err)
	}
	n := 0
	err := filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, path)
		want, _ := os.ReadFile(path)
		got, err := os.ReadFile(filepath.Join("..", rel))
		if err != nil {
			t.Errorf("%s is missing: run go run ./clients/gen", rel)
			return nil
		}
		if !bytes.Equal(got, want) {
			t.Errorf("clients/%s is not what the document gives: run go run ./clients/gen", rel)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 6 {
		t.Fatalf("compared %d generated files, want 6", n)
	}
}

func TestNames(t *testing.T) {
	for _, c := range []struct{ in, goName, camel, snake string }{
		{"get-me", "GetMe", "getMe", "get_me"},
		{"oauth-token", "OAuthToken", "oauthToken", "oauth_token"},
		{"put-rsvp", "PutRSVP", "putRsvp", "put_rsvp"},
		{"get-webhook-ip-ranges", "GetWebhookIPRanges", "getWebhookIpRanges", "get_webhook_ip_ranges"},
		{"user_ids", "UserIDs", "userIds", "user_ids"},
		{"APIKey", "APIKey", "apiKey", "api_key"},
		{"match.accepted", "MatchAccepted", "matchAccepted", "match_accepted"},
	} {
		if got := goName(c.in); got != c.goName {
			t.Errorf("goName(%q) = %q, want %q", c.in, got, c.goName)
		}
		if got := camel(c.in); got != c.camel {
			t.Errorf("camel(%q) = %q, want %q", c.in, got, c.camel)
		}
		if got := snake(c.in); got != c.snake {
			t.Errorf("snake(%q) = %q, want %q", c.in, got, c.snake)
		}
	}
}
