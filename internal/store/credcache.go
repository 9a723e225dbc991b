package store

import (
	"strings"
	"sync"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apikeys"
)

// credCache keeps, in this process, the API keys requests presented, each
// with its owner's account as KeyByHash read it, so that a request with a
// known key needs no query: on this 2-core machine that query was most of
// what an authenticated read cost.
//
// A cached key is never used after a change to it, to its owner's account
// or sports has committed, on any node or by any process, by the service or
// by hand-written SQL (on PostgreSQL, one typed by hand is seen within
// 50 ms); that is, revoking a key, suspending or erasing an account, or
// changing a tier is seen by the very next request everywhere:
//
//   - SQLite: every connection of every process that opens the database
//     file carries a pre-update hook (credwatch.go) that bumps a counter
//     shared through a small memory-mapped file beside the database
//     (credepoch_unix.go) when a row of users, user_sports or api_keys
//     changes, before the change commits and again once it has. An entry is
//     used only while that counter still holds the value it had when the
//     entry's query started. Reading it costs no system call.
//   - PostgreSQL: triggers (migration 00080) NOTIFY the owners' ids when
//     such a change commits. Each node holds a connection of its own that
//     LISTENs and makes a round trip on it every 20 ms; a key is answered
//     from memory only while the last round trip started under 50 ms ago,
//     and the service waits 60 ms after committing a change to credentials
//     before it answers, so that by then every node has heard of it (see
//     credBarrier). A node whose connection fails uses no entry until it is
//     back.
//
// A fill races a change: a query may read the old row while the change is
// being committed. So an entry is stored only if no invalidation happened
// since its query started (gen, and the shared counter on SQLite), and
// since the invalidation comes after the commit, an entry stored before it
// is dropped by it. Only keys that exist are kept (a flood of made-up keys
// cannot fill the memory), entries expire after credMaxAge all the same, and
// the cache holds at most credMaxEntries.
type credCache struct {
	mu      sync.Mutex
	entries map[string]*credEntry // by key hash
	gen     uint64                // bumped by every invalidation
	live    bool                  // entries may be used and stored
	epoch   *fileEpoch            // SQLite: the counter shared by the processes; nil on PostgreSQL
	now     func() time.Time
	hits    uint64 // lookups answered from memory, for tests
}

type credEntry struct {
	ki    *apikeys.KeyInfo
	epoch uint64 // SQLite: the shared counter when the entry's query started
	at    time.Time
}

const (
	// credMaxAge bounds how long an entry lives even with no change to it:
	// a last defence, should a change ever reach the database around the
	// hooks and triggers (a restore from a backup, say).
	credMaxAge = time.Minute
	// credMaxEntries bounds memory: about 2 KiB an entry.
	credMaxEntries = 20_000
)

func newCredCache() *credCache {
	return &credCache{entries: map[string]*credEntry{}, now: time.Now}
}

// credFill is what a lookup noted before its query, for store.
type credFill struct{ gen, epoch uint64 }

// get returns a copy of the cached key for hash, or nil.
func (c *credCache) get(hash string) *apikeys.KeyInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live {
		return nil
	}
	e := c.entries[hash]
	if e == nil {
		return nil
	}
	if (c.epoch != nil && e.epoch != c.epoch.load()) || c.now().Sub(e.at) > credMaxAge {
		delete(c.entries, hash)
		return nil
	}
	c.hits++
	return copyKeyInfo(e.ki)
}

// begin notes the state a lookup's query starts from.
func (c *credCache) begin() credFill {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := credFill{gen: c.gen}
	if c.epoch != nil {
		f.epoch = c.epoch.load()
	}
	return f
}

// store keeps ki for hash, unless something changed since f was noted.
func (c *credCache) store(hash string, ki *apikeys.KeyInfo, f credFill) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live || c.gen != f.gen || (c.epoch != nil && c.epoch.load() != f.epoch) {
		return
	}
	if len(c.entries) >= credMaxEntries {
		clear(c.entries)
	}
	c.entries[hash] = &credEntry{ki: copyKeyInfo(ki), epoch: f.epoch, at: c.now()}
}

// invalidate drops the entries of the given owners, or all of them when
// the list is empty or holds "*".
func (c *credCache) invalidate(userIDs ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if len(userIDs) == 0 || (len(userIDs) == 1 && userIDs[0] == "*") {
		clear(c.entries)
		return
	}
	gone := make(map[string]bool, len(userIDs))
	for _, id := range userIDs {
		gone[id] = true
	}
	for hash, e := range c.entries {
		if gone[e.ki.Key.UserID] {
			delete(c.entries, hash)
		}
	}
}

// invalidatePayload handles a notification's payload (see migration 00080).
func (c *credCache) invalidatePayload(payload string) {
	if payload == "" || payload == "*" {
		c.invalidate()
		return
	}
	c.invalidate(strings.Split(payload, ",")...)
}

// setLive turns the cache on or off, empty either way.
func (c *credCache) setLive(live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.entries)
	c.live = live
}

// touched records in the cached copies that a key was just used, as the
// database now says, so that a cached key is not written back every request.
func (c *credCache) touched(keyID string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.ki.Key.ID == keyID {
			t := at.UTC()
			e.ki.Key.LastUsedAt = &t
		}
	}
}
