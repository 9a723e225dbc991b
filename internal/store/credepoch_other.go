//go:build !unix

package store

import "errors"

// fileEpoch needs shared memory mappings; without them SQLite keeps no
// credentials in memory and every request reads its key from the database.
type fileEpoch struct{}

func openEpoch(string) (*fileEpoch, error) {
	return nil, errors.New("store: no shared counter on this platform")
}

func (e *fileEpoch) load() uint64 { return 0 }
func (e *fileEpoch) bump()        {}
