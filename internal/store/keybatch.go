package store

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
	"github.com/matchpoint-api/matchpoint/internal/apperr"
	"github.com/matchpoint-api/matchpoint/internal/users"
)

// keyBatch coalesces the API key lookups of concurrent requests: while one
// query is in flight, the lookups that arrive queue up, and the next query
// reads them all (WHERE key_hash IN (...)). Under load a request then costs
// a fraction of a database round trip, which on a small machine is most of
// what an authenticated read costs; with no load nothing waits, the first
// lookup runs at once.
//
// Nothing is cached: a lookup is answered only by a query that started
// after the lookup arrived, so a revoked key, a deleted account or a changed
// tier is seen by the very next request on every node, as with a query of
// its own.
type keyBatch struct {
	db *DB

	mu      sync.Mutex
	running bool
	queue   []*keyWait
}

type keyWait struct {
	hash string
	done chan struct{}
	ki   *apikeys.KeyInfo
	err  error
}

// maxKeyBatch bounds one query's IN list. Lists are padded to a power of two
// so that a handful of statement texts are prepared, not one per size.
const maxKeyBatch = 64

// keyQueryTimeout bounds a shared query, which runs on no one request's context.
const keyQueryTimeout = 10 * time.Second

func (b *keyBatch) get(ctx context.Context, hash string) (*apikeys.KeyInfo, error) {
	w := &keyWait{hash: hash, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, w)
	lead := !b.running
	b.running = true
	b.mu.Unlock()
	if lead {
		b.run()
	}
	select {
	case <-w.done:
		return w.ki, w.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// run answers the queued lookups, one query at a time, until none are left;
// the batches after the first are run by a goroutine of their own, so the
// request that started it is not kept waiting for others'.
func (b *keyBatch) run() {
	b.mu.Lock()
	n := min(len(b.queue), maxKeyBatch)
	batch := b.queue[:n:n]
	b.queue = b.queue[n:]
	b.mu.Unlock()

	found, err := b.query(batch)
	for _, w := range batch {
		switch ki := found[w.hash]; {
		case err != nil:
			w.err = err
		case ki == nil:
			w.err = apperr.NotFoundf("no such API key")
		default:
			w.ki = copyKeyInfo(ki)
		}
		close(w.done)
	}

	b.mu.Lock()
	if len(b.queue) > 0 {
		b.mu.Unlock()
		go b.run()
		return
	}
	b.running = false
	b.mu.Unlock()
}

// query reads the keys of batch with their owners and the owners' sports,
// one row per sport (or one with NULLs), in one round trip. The key is
// selected in a subquery whose columns are renamed, so the users columns
// keep their plain names (as in Users.one).
func (b *keyBatch) query(batch []*keyWait) (map[string]*apikeys.KeyInfo, error) {
	hashes := make([]string, 0, len(batch))
	for _, w := range batch {
		if !slices.Contains(hashes, w.hash) {
			hashes = append(hashes, w.hash)
		}
	}
	size := 1
	for size < len(hashes) {
		size *= 2
	}
	args := make([]any, size)
	marks := make([]string, size)
	for i := range args {
		args[i], marks[i] = hashes[min(i, len(hashes)-1)], "$"+strconv.Itoa(i+1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), keyQueryTimeout)
	defer cancel()
	rows, err := b.db.QueryContext(ctx, `SELECT k.k_hash, k.k_id, k.k_user, k.k_name, k.k_hint, k.k_scopes, k.k_created, k.k_used, k.k_revoked,
		users.deleted_at, `+userColumns+`, user_sports.sport, user_sports.skill_level
		FROM (SELECT key_hash AS k_hash, id AS k_id, user_id AS k_user, name AS k_name, hint AS k_hint, scopes AS k_scopes,
			created_at AS k_created, last_used_at AS k_used, revoked_at AS k_revoked
			FROM api_keys WHERE key_hash IN (`+strings.Join(marks, ", ")+`)) k
		JOIN users ON users.id = k.k_user LEFT JOIN user_sports ON user_sports.user_id = users.id
		ORDER BY k.k_hash, user_sports.position`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: get API key: %w", err)
	}
	defer rows.Close()
	found := map[string]*apikeys.KeyInfo{}
	for rows.Next() {
		var hash string
		var deleted sql.NullInt64
		var sport, level sql.NullString
		var k *apikeys.Key
		u, err := scanUser(scannerFunc(func(dest ...any) error {
			var err error
			k, err = readKey(rowScanner{rows, &hash}, append([]any{&deleted}, dest...)...)
			return err
		}), &sport, &level)
		if err != nil {
			return nil, fmt.Errorf("store: get API key: %w", err)
		}
		ki := found[hash]
		if ki == nil {
			u.Sports, u.SkillLevels = []string{}, map[string]string{}
			ki = &apikeys.KeyInfo{Key: *k, UserRole: u.Role, UserTier: u.Tier, UserLimit: u.RateLimit, UserGone: deleted.Valid, Suspension: u.Suspension, Owner: u}
			found[hash] = ki
		}
		if owner := ki.Owner.(*users.User); sport.Valid {
			owner.Sports = append(owner.Sports, sport.String)
			if level.Valid {
				owner.SkillLevels[sport.String] = level.String
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: get API key: %w", err)
	}
	return found, nil
}

// copyKeyInfo gives each request a record of its own: requests that sent
// the same key get the same row, and must not share what a handler might
// change.
func copyKeyInfo(ki *apikeys.KeyInfo) *apikeys.KeyInfo {
	c := *ki
	c.Key.Scopes = slices.Clone(ki.Key.Scopes)
	if ki.UserLimit != nil {
		limit := *ki.UserLimit
		c.UserLimit = &limit
	}
	u := *ki.Owner.(*users.User)
	u.Sports, u.SkillLevels, u.Availability = slices.Clone(u.Sports), maps.Clone(u.SkillLevels), slices.Clone(u.Availability)
	u.RateLimit = c.UserLimit
	if u.Latitude != nil {
		lat, lon := *u.Latitude, *u.Longitude
		u.Latitude, u.Longitude = &lat, &lon
	}
	c.Owner = &u
	return &c
}

// rowScanner reads a leading column (the key hash) before the others.
type rowScanner struct {
	rows  *sql.Rows
	first any
}

func (r rowScanner) Scan(dest ...any) error { return r.rows.Scan(append([]any{r.first}, dest...)...) }

// scannerFunc lets one row be read by two scanners in turn.
type scannerFunc func(dest ...any) error

func (f scannerFunc) Scan(dest ...any) error { return f(dest...) }
