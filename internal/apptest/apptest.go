// Package apptest starts the whole service for tests: a real HTTP server
// over a real database (SQLite, and PostgreSQL when configured), with a fake
// clock, and a browser that fills in the service's HTML forms.
package apptest

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/app"
	"github.com/matchpoint-api/matchpoint/internal/clock"
	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/oauth"
	"github.com/matchpoint-api/matchpoint/internal/store"
	"github.com/matchpoint-api/matchpoint/internal/testdb"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// Server is a running service.
type Server struct {
	URL   string
	App   *app.App
	Clock *clock.Fake
	HTTP  *httptest.Server
}

// Each runs fn once per engine, each with its own server and database. The
// engines run in parallel: nothing is shared between them.
func Each(t *testing.T, fn func(t *testing.T, s *Server)) {
	t.Helper()
	for _, d := range testdb.Engines() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			fn(t, Start(t, d))
		})
	}
}

// Start runs the service on a fresh database of engine d.
func Start(t testing.TB, d store.Dialect) *Server { return StartWith(t, d, Options{}) }

// Options change how StartWith sets the service up.
type Options struct {
	TrustedProxies string    // MATCHPOINT_TRUSTED_PROXIES
	Log            io.Writer // receives the service's log (JSON, debug level); default: nowhere
	// Configure changes the settings and options last, before the service opens.
	Configure func(*config.Config, *app.Options)
}

// StartWith runs the service on a fresh database of engine d, with options.
func StartWith(t testing.TB, d store.Dialect, o Options) *Server {
	t.Helper()
	dbURL := testdb.NewURL(t, d)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	cfg := config.Config{DatabaseURL: dbURL, BaseURL: base, DocsURL: base + "/docs/errors", TrustedProxies: o.TrustedProxies}
	clk := clock.NewFake(time.Now().UTC().Truncate(time.Millisecond))
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if o.Log != nil {
		log = slog.New(slog.NewJSONHandler(o.Log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	opts := app.Options{Clock: clk, Logger: log}
	if o.Configure != nil {
		o.Configure(&cfg, &opts)
	}
	a, err := app.Open(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := &httptest.Server{Listener: ln, Config: &http.Server{Handler: a.Handler}}
	hs.Start()
	t.Cleanup(func() {
		a.StopStream() // open streams would hold up Close
		hs.Close()
		a.Close()
	})
	return &Server{URL: base, App: a, Clock: clk, HTTP: hs}
}

// Password is the password of every user made by User.
const Password = "correct horse battery"

// User registers an account.
func (s *Server) User(t testing.TB, username string) *users.User {
	t.Helper()
	u, err := s.App.Users.Register(context.Background(), users.Registration{
		Email: username + "@example.com", Username: username, Password: Password, FirstName: username,
	})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Client registers an OAuth client owned by the first-party account unless
// spec names an owner, and returns it with its secret.
func (s *Server) Client(t testing.TB, spec oauth.ClientSpec) (*oauth.Client, string) {
	t.Helper()
	ctx := context.Background()
	if spec.OwnerID == "" {
		sys, err := s.App.Users.EnsureSystemAccount(ctx)
		if err != nil {
			t.Fatal(err)
		}
		spec.OwnerID = sys.ID
	}
	if spec.Name == "" {
		spec.Name = "Test App"
	}
	c, secret, err := s.App.OAuth.RegisterClient(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	return c, secret
}
