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

	"golang.org/x/oauth2"

	"github.com/matchpoint-api/matchpoint/internal/apptest"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
)

// TestOAuthFlow drives the whole authorization-code flow with a real OAuth
// client library: sign-in and consent through the HTML forms, code exchange
// with PKCE, an API call, refresh, and revocation.
func TestOAuthFlow(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Server) {
		client, secret := s.Client(t, oauth.ClientSpec{Name: "Court Finder", RedirectURIs: []string{"http://127.0.0.1:9/callback"}})
		user := s.User(t, "rafa")
		conf := &oauth2.Config{
			ClientID: client.ID, ClientSecret: secret, RedirectURL: "http://127.0.0.1:9/callback",
			Scopes:   []string{"read", "write"},
			Endpoint: oauth2.Endpoint{AuthURL: s.URL + "/oauth/authorize", TokenURL: s.URL + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams},
		}
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, &http.Client{Timeout: 10 * time.Second})
		verifier := oauth2.GenerateVerifier()
		state := "xyz-" + time.Now().Format("150405")
		br := s.NewBrowser(t)

		// Sign in, then consent: the consent page names the app and the scopes in plain words.
		p := br.Get(conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)))
		login := p.Form(t, "/login")
		p = br.Submit(login, map[string]string{"login": "rafa@example.com", "password": apptest.Password})
		consent := p.Form(t, "/oauth/authorize")
		for _, want := range []string{"Court Finder", "See your profile, email address included", "Change your profile and username"} {
			if !strings.Contains(p.Body, want) {
				t.Errorf("consent page lacks %q", want)
			}
		}
		if p.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(p.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
			t.Errorf("consent page may be framed: %v", p.Header)
		}
		if vals := consent.Buttons["decision"]; len(vals) != 2 || vals[0] != "allow" || vals[1] != "deny" {
			t.Errorf("consent buttons = %v", consent.Buttons)
		}
		p = br.Submit(consent, map[string]string{"decision": "allow"})
		if p.Location == nil {
			t.Fatalf("consent did not redirect: %d %s", p.Status, p.Body)
		}
		if got := p.Location.Query().Get("state"); got != state {
			t.Fatalf("state = %q, want %q", got, state)
		}

		tok, err := conf.Exchange(ctx, p.Location.Query().Get("code"), oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatalf("exchange: %v", err)
		}
		if tok.TokenType != "Bearer" || tok.RefreshToken == "" || tok.Extra("scope") != "read write" || tok.Extra("expires_in") != float64(3600) {
			t.Fatalf("token set = %+v scope=%v expires_in=%v", tok, tok.Extra("scope"), tok.Extra("expires_in"))
		}

		// The API, through the library's authenticated client.
		me := getMe(t, conf.Client(ctx, tok), s.URL)
		if me["id"] != user.ID || me["username"] != "rafa" || me["email"] != "rafa@example.com" {
			t.Fatalf("/v1/users/me = %v", me)
		}

		// Refresh: force it by presenting only the refresh token.
		fresh, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
		if err != nil {
			t.Fatalf("refresh: %v", err)
		}
		if fresh.AccessToken == tok.AccessToken || fresh.RefreshToken == tok.RefreshToken || fresh.RefreshToken == "" {
			t.Fatal("refresh did not rotate both tokens")
		}
		if me := getMe(t, conf.Client(ctx, fresh), s.URL); me["id"] != user.ID {
			t.Fatalf("/v1/users/me after refresh = %v", me)
		}

		// Introspection shows the new token as active for its own client.
		in := postForm(t, s, "/oauth/introspect", url.Values{"token": {fresh.AccessToken}, "client_id": {client.ID}, "client_secret": {secret}}).JSON(t)
		if in["active"] != true || in["scope"] != "read write" || in["sub"] != user.ID || in["client_id"] != client.ID || in["username"] != "rafa" {
			t.Fatalf("introspect = %v", in)
		}

		// Revoke the refresh token: the whole grant goes, access token included.
		r := postForm(t, s, "/oauth/revoke", url.Values{"token": {fresh.RefreshToken}, "client_id": {client.ID}, "client_secret": {secret}})
		if r.Status != http.StatusOK {
			t.Fatalf("revoke: %d %s", r.Status, r.Body)
		}
		wantProblem(t, s, api(t, s, "GET", "/v1/users/me", fresh.AccessToken, ""), 401, "invalid_token", "")
		if _, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: fresh.RefreshToken}).Token(); err == nil {
			t.Fatal("revoked refresh token still refreshes")
		}
		in = postForm(t, s, "/oauth/introspect", url.Values{"token": {fresh.AccessToken}, "client_id": {client.ID}, "client_secret": {secret}}).JSON(t)
		if len(in) != 1 || in["active"] != false {
			t.Fatalf("introspect after revoke = %v", in)
		}

		// Consent is remembered: the same request goes straight back with a code.
		p = br.Get(conf.AuthCodeURL("again", oauth2.S256ChallengeOption(verifier)))
		if p.Location == nil || p.Location.Query().Get("code") == "" || p.Location.Query().Get("state") != "again" {
			t.Fatalf("remembered consent: %d %v", p.Status, p.Location)
		}
		// ... unless the client asks again with prompt=consent.
		p = br.Get(conf.AuthCodeURL("ask", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("prompt", "consent")))
		p.Form(t, "/oauth/authorize")
		// ... or asks for more than was granted.
		wider := *conf
		wider.Scopes = []string{"read", "write", "events"}
		p = br.Get(wider.AuthCodeURL("more", oauth2.S256ChallengeOption(verifier)))
		p.Form(t, "/oauth/authorize")
	})
}

func getMe(t *testing.T, c *http.Client, base string) map[string]any {
	t.Helper()
	res, err := c.Get(base + "/v1/users/me")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("/v1/users/me: %d %s", res.StatusCode, b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
