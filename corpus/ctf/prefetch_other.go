//go:build !linux

package ctf

// Prefetch implements corpus.Prefetcher: nothing to do here.
func (r *Reader) Prefetch(c int) {}
