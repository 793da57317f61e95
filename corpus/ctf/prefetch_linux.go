//go:build linux

package ctf

import (
	"os"

	"golang.org/x/sys/unix"
)

// Prefetch implements corpus.Prefetcher: the kernel starts reading chunk
// c's bytes into the page cache (posix_fadvise WILLNEED), unless
// BATCHPREP_NO_WILLNEED is set.
func (r *Reader) Prefetch(c int) {
	if noWillNeed {
		return
	}
	off, n := r.x.span(c)
	unix.Fadvise(int(r.f.Fd()), off, n, unix.FADV_WILLNEED)
}

var noWillNeed = os.Getenv("BATCHPREP_NO_WILLNEED") != ""
