package main

import (
	"context"
	"fmt"
	"io"

	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/store"
)

const migrateUsage = `usage: matchpoint migrate [up|status] [flags]

  up      apply the migrations the database lacks (the default; serve does it too)
  status  list every migration and whether it is applied
`

func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("migrate", migrateUsage)
	cfg := config.RegisterDatabase(fs, getenv)
	pos, err := parseArgs(fs, args, 1, stdout, stderr)
	if err != nil {
		return err
	}
	sub := "up"
	if len(pos) > 0 {
		sub = pos[0]
	}
	if sub != "up" && sub != "status" {
		return usageError(fs, stderr, fmt.Sprintf("unknown migrate command %q: want up or status", sub))
	}
	db, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	switch sub {
	case "up":
		applied, err := db.Migrate(ctx)
		if err != nil {
			return err
		}
		if len(applied) == 0 {
			fmt.Fprintln(stdout, "schema is up to date")
		}
		for _, m := range applied {
			fmt.Fprintln(stdout, "applied", m)
		}
	case "status":
		st, err := db.MigrationStatus(ctx)
		if err != nil {
			return err
		}
		for _, line := range st {
			fmt.Fprintln(stdout, line)
		}
	}
	return nil
}
