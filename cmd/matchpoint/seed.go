package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/matching/synth"
	"github.com/matchpoint-api/matchpoint/internal/secrets"
	"github.com/matchpoint-api/matchpoint/internal/store"
)

// seedEnv is what every seeding step gets: the database, the options and
// the ids the earlier steps wrote.
type seedEnv struct {
	db       *store.DB
	users    int
	batch    int
	seed     int64
	password string
	stderr   io.Writer
}

// seedStep is one kind of demo data. Domains add theirs to seedSteps (sports
// events, conversations...); each returns its part of the JSON summary.
type seedStep struct {
	name string
	run  func(ctx context.Context, e *seedEnv) (any, error)
}

var seedSteps = []seedStep{
	{"users", seedUsers},
}

func seed(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := config.Register(fs, getenv)
	e := &seedEnv{stderr: stderr}
	fs.IntVar(&e.users, "users", 1000, "how many synthetic users to add")
	fs.IntVar(&e.batch, "batch", 10000, "users per transaction")
	fs.Int64Var(&e.seed, "seed", time.Now().UnixNano(), "random seed (the same seed makes the same people, with new ids)")
	fs.StringVar(&e.password, "password", "", "a password every seeded user can sign in with (default: none can)")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if e.users < 0 || e.batch < 1 {
		return fmt.Errorf("--users must be at least 0 and --batch at least 1")
	}
	db, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return err
	}
	e.db = db
	summary := map[string]any{"database": string(db.Dialect)}
	for _, st := range seedSteps {
		out, err := st.run(ctx, e)
		if err != nil {
			return fmt.Errorf("%s: %w", st.name, err)
		}
		summary[st.name] = out
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(summary)
}

func seedUsers(ctx context.Context, e *seedEnv) (any, error) {
	hash := ""
	if e.password != "" {
		hash = secrets.HashPassword(e.password)
	}
	var tag [2]byte
	_, _ = rand.Read(tag[:])
	g := synth.New(synth.Options{Seed: e.seed, Tag: hex.EncodeToString(tag[:])})
	sum, err := synth.Seed(ctx, e.db, g, e.users, e.batch, hash, synth.ProgressBar(e.stderr, "users", e.users), nil)
	if err != nil {
		return nil, err
	}
	return sum, e.db.OptimizeMatchIndex(ctx)
}
