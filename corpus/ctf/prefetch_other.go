//go:build !linux

package ctf

// adviseWillNeed has no portable equivalent: reads are not hinted.
func adviseWillNeed(f any, off, n int64) {}
