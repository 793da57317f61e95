//go:build linux

package ctf

import (
	"os"

	"golang.org/x/sys/unix"
)

// adviseWillNeed tells the kernel that [off, off+n) of f will be read soon.
func adviseWillNeed(f any, off, n int64) {
	if fd, ok := f.(interface{ Fd() uintptr }); ok {
		unix.Fadvise(int(fd.Fd()), off, n, unix.FADV_WILLNEED)
	}
}

// preadNoWait reads the start of p from f at off as far as it can without
// waiting (preadv2 with RWF_NOWAIT): the bytes in the page cache, and any
// the read-ahead it starts brings at once (a device that answers at once
// counts as cached). It returns how many bytes it read: len(p), or less
// (maybe 0) when the rest would have meant a wait, f is not an *os.File or
// the kernel refuses the flag. The caller reads the rest. A short read is
// not tried again: the read-ahead it started may have brought the rest by
// then, and the range would pass for cached.
func preadNoWait(f any, p []byte, off int64) int {
	file, ok := f.(*os.File)
	if !ok || len(p) == 0 {
		return 0
	}
	sc, err := file.SyscallConn()
	if err != nil {
		return 0
	}
	got := 0
	sc.Read(func(fd uintptr) bool {
		for {
			n, err := unix.Preadv2(int(fd), [][]byte{p}, off, unix.RWF_NOWAIT)
			if err == unix.EINTR {
				continue
			}
			if err == nil && n > 0 {
				got = n
			}
			return true
		}
	})
	return got
}
