package store

import (
	"context"
	"embed"
	"fmt"
	"hash/crc32"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations
var migrations embed.FS

// provider returns goose over this database's migration folder. On PostgreSQL
// it takes an advisory session lock, so several nodes can start at once and
// only one migrates. The lock is the schema's own (advisory locks are
// database-wide): deployments that keep several schemas in one database, and
// tests that give each test a schema, do not queue behind each other. The
// lock is retried every second rather than goose's default five.
func (db *DB) provider(ctx context.Context) (*goose.Provider, error) {
	dir, err := fs.Sub(migrations, "migrations/"+string(db.Dialect))
	if err != nil {
		return nil, err
	}
	var opts []goose.ProviderOption
	dialect := database.DialectSQLite3
	if db.Dialect == Postgres {
		dialect = database.DialectPostgres
		var schema string
		if err := db.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
			return nil, err
		}
		id := int64(crc32.ChecksumIEEE([]byte("goose:" + schema)))
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(id), lock.WithLockTimeout(1, 300))
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	return goose.NewProvider(dialect, db.DB, dir, opts...)
}

// Migrate brings the schema up to date.
func (db *DB) Migrate(ctx context.Context) ([]string, error) {
	p, err := db.provider(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: migrations: %w", err)
	}
	res, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: migrate: %w", err)
	}
	db.findTouchColumn(ctx)
	var applied []string
	for _, r := range res {
		applied = append(applied, r.Source.Path)
	}
	return applied, nil
}

// MigrationStatus lists every migration and whether it is applied.
func (db *DB) MigrationStatus(ctx context.Context) ([]string, error) {
	p, err := db.provider(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: migrations: %w", err)
	}
	st, err := p.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: migration status: %w", err)
	}
	var out []string
	for _, s := range st {
		out = append(out, fmt.Sprintf("%s\t%s", s.Source.Path, s.State))
	}
	return out, nil
}
