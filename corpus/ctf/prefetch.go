package ctf

import (
	"os"

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
// advice again.
func (r *Reader) Prefetch(c int) {
	r.layout.Need(c)
	off, n := r.x.span(c)
	if h, ok := r.f.(corpus.Hinter); ok {
		h.Hint(off, n)
		return
	}
	if !noWillNeed && r.noWaitRun.Load() < noWaitRunSkip {
		willNeed(r.f, off, n)
	}
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
