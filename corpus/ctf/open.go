package ctf

import (
	"context"
	"fmt"
	"os"

	"github.com/batchprep/batchprep/corpus"
)

// OpenOptions are choices of OpenContext that do not change what is read.
type OpenOptions struct {
	// File, when set, is the file to read, already open: nothing is opened
	// by path (path still names the file in messages and places the index
	// cache), so the file read is the one the caller opened and checked,
	// whatever the path names meanwhile. On success the Reader owns File
	// (Reader.Close closes it); on error the caller still does.
	File corpus.Blob
	// Progress, when set, is called as the index pass reads the file, with
	// the bytes read since its last call (about 1 MiB at a time; from
	// several goroutines at once when the pass is parallel).
	Progress func(n int64)
}

// OpenContext is Open checking ctx between the blocks (about 1 MiB each) of
// the index pass: once ctx is done, every goroutine of the pass stops at
// its next block, and OpenContext returns an error that unwraps to
// ctx.Err() (invariant 13).
func OpenContext(ctx context.Context, path string, cfg Config, o OpenOptions) (*Reader, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	f := o.File
	if f == nil {
		var err error
		if f, err = os.Open(path); err != nil {
			return nil, fmt.Errorf("ctf: %w", err)
		}
	}
	r, err := openFile(&pass{ctx: ctx, progress: o.Progress}, f, path, cfg)
	if err != nil && o.File == nil {
		f.Close()
	}
	return r, err
}

// pass is what an index pass checks and reports between blocks. A nil
// *pass is never stopped and reports nothing.
type pass struct {
	ctx      context.Context
	progress func(n int64)
}

// block reports n bytes read and tells whether the pass must stop.
func (p *pass) block(n int) error {
	if p == nil {
		return nil
	}
	if p.progress != nil && n > 0 {
		p.progress(int64(n))
	}
	return p.err()
}

// err is the context's error, wrapped, once the pass must stop.
func (p *pass) err() error {
	if p == nil || p.ctx == nil {
		return nil
	}
	if err := p.ctx.Err(); err != nil {
		return fmt.Errorf("ctf: indexing stopped: %w", err)
	}
	return nil
}
