//go:build !linux

package ctf

// adviseWillNeed has no portable equivalent: reads are not hinted.
func adviseWillNeed(f any, off, n int64) {}

// preadNoWait has no portable equivalent: it reads nothing, and reads are
// hinted (as far as they can be).
func preadNoWait(f any, p []byte, off int64) int { return 0 }
