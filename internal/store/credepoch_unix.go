//go:build unix

package store

import (
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// fileEpoch is a counter that every process opening one SQLite database
// shares: eight bytes of a file beside it, mapped into each process's
// memory, so reading it costs no system call. Processes change it with
// atomic instructions, which hold across processes on shared memory.
//
// The mapping is never undone: a handle's cache may still read the counter
// while the handle closes, and unmapping under it would crash the process;
// a page per database opened is all it costs.
type fileEpoch struct {
	mem []byte // the mapping, held for the life of the process
	p   *uint64
}

// openEpoch maps (creating it if need be) the counter file at path.
func openEpoch(path string) (*fileEpoch, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	defer f.Close() // the mapping outlives the descriptor
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("store: stat %s: %w", path, err)
	}
	// Growing to 8 bytes adds zeros; a file another process already grew
	// keeps its count.
	if fi.Size() < 8 {
		if err := f.Truncate(8); err != nil {
			return nil, fmt.Errorf("store: size %s: %w", path, err)
		}
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, 8, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("store: map %s: %w", path, err)
	}
	// A mapping starts on a page boundary: the counter is aligned.
	return &fileEpoch{mem: mem, p: (*uint64)(unsafe.Pointer(&mem[0]))}, nil
}

func (e *fileEpoch) load() uint64 { return atomic.LoadUint64(e.p) }

func (e *fileEpoch) bump() { atomic.AddUint64(e.p, 1) }
