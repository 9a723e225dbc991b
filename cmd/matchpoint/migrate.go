package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/matchpoint-api/matchpoint/internal/config"
	"github.com/matchpoint-api/matchpoint/internal/store"
)

func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := config.Register(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	db, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	switch fs.Arg(0) {
	case "", "up":
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
	default:
		return fmt.Errorf("unknown migrate command %q: want up or status", fs.Arg(0))
	}
	return nil
}
