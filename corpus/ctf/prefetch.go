package ctf

import (
	"os"

	"github.com/batchprep/batchprep/corpus"
)

// Prefetch implements corpus.Prefetcher: chunk c's bytes start on their
// way before the chunk is read. An object fetches them into its cache; a
// local file asks the kernel to read them into the page cache
// (posix_fadvise WILLNEED, Linux only), unless BATCHPREP_NO_WILLNEED is set.
func (r *Reader) Prefetch(c int) {
	off, n := r.x.span(c)
	if h, ok := r.f.(corpus.Hinter); ok {
		h.Hint(off, n)
		return
	}
	if !noWillNeed {
		adviseWillNeed(r.f, off, n)
	}
}

var noWillNeed = os.Getenv("BATCHPREP_NO_WILLNEED") != ""
