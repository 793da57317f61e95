package ctf

import (
	"os"
	"sync"

	"github.com/batchprep/batchprep/corpus"
)

// Prefetch implements corpus.Prefetcher: chunk c's bytes start on their
// way before the chunk is read. An object fetches them into its cache; a
// local file asks the kernel to read them into the page cache
// (posix_fadvise WILLNEED, Linux only), unless BATCHPREP_NO_WILLNEED is set
// or the last noWaitRunSkip chunk reads got their bytes without waiting
// (preadNoWait): the advice walks every page of the chunk, for nothing
// when they are all there (15 ms of a window-order read of cached ATIS x150,
// on the reader's goroutine). A read that falls short starts the
// advice again, and advises the chunks it skipped (adviseSkipped).
func (r *Reader) Prefetch(c int) {
	r.layout.Need(c)
	off, n := r.x.span(c)
	if h, ok := r.f.(corpus.Hinter); ok {
		h.Hint(off, n)
		return
	}
	switch {
	case noWillNeed:
	case r.noWaitRun.Load() < noWaitRunSkip:
		willNeed(r.f, off, n)
	default:
		r.unadvised.add(c)
	}
}

// adviseSkipped gives the advice Prefetch skipped, for every chunk it
// skipped since the last read that fell short but c: a read of chunk c
// has just fallen short, so the file is not all in the page cache, and
// the chunks queued meanwhile (a window's worth at once) may be among
// what is missing. Unadvised, each of their reads would wait for the
// device in turn; a chunk read since is advised for nothing, a walk of
// its cached pages.
func (r *Reader) adviseSkipped(c int) {
	for _, k := range r.unadvised.take() {
		if k != c {
			off, n := r.x.span(k)
			willNeed(r.f, off, n)
		}
	}
}

// unadvised holds the chunks Prefetch did not advise the kernel of: at
// most maxUnadvised, the latest.
type unadvised struct {
	mu sync.Mutex
	cs []int
}

// maxUnadvised bounds the chunks kept unadvised: 256 MiB at read's
// default chunk size, a few windows.
const maxUnadvised = 256

func (u *unadvised) add(c int) {
	u.mu.Lock()
	if len(u.cs) >= maxUnadvised {
		u.cs = u.cs[:copy(u.cs, u.cs[len(u.cs)-maxUnadvised/2:])]
	}
	u.cs = append(u.cs, c)
	u.mu.Unlock()
}

// take returns the chunks held and holds none.
func (u *unadvised) take() []int {
	u.mu.Lock()
	defer u.mu.Unlock()
	cs := u.cs
	u.cs = nil
	return cs
}

// noWaitRunSkip is how many chunk reads in a row must find their bytes in
// the page cache before Prefetch stops advising the kernel.
const noWaitRunSkip = 8

// HintAhead implements corpus.AheadHinter: for a file read around the
// page cache (internal/direct), the chunks its read-ahead bytes hold; 0
// for others, which the kernel or the object store read ahead.
func (r *Reader) HintAhead() int {
	if a, ok := r.f.(interface{ AheadBytes() int64 }); ok {
		return int(a.AheadBytes()/r.cfg.chunkBytes()) + 1
	}
	return 0
}

var noWillNeed = os.Getenv("BATCHPREP_NO_WILLNEED") != ""

// willNeed and readNoWait are adviseWillNeed and preadNoWait, or what a
// test counts their calls with or cuts their reads short with.
var (
	willNeed   = adviseWillNeed
	readNoWait = preadNoWait
)
