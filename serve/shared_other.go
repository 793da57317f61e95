//go:build !linux

package serve

import (
	"context"
	"errors"
	"time"
)

// ring is shared memory between the server and a reader on the same host
// (SequenceRequest.shared_memory): Linux only.
type ring struct {
	path    string
	size    uint64
	written uint64
	stall   time.Duration
}

func newRing(size int) (*ring, error) {
	return nil, errors.New("shared memory is only on Linux")
}

func (r *ring) reserve(ctx context.Context, n int) (uint64, []byte, error) {
	return 0, nil, errors.New("shared memory is only on Linux")
}

func (r *ring) drain(ctx context.Context) error { return nil }

func (r *ring) close() {}
