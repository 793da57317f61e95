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

// readCached reads the start of p from f at off as far as the page cache
// holds it (preadv2 with RWF_NOWAIT: no wait for the disk) and returns how
// many bytes it read: len(p) when the whole range was cached, less (maybe
// 0) when it was not, or when f is not an *os.File or the kernel refuses
// the flag. The caller reads the rest.
func readCached(f any, p []byte, off int64) int {
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
		for got < len(p) {
			n, err := unix.Preadv2(int(fd), [][]byte{p[got:]}, off+int64(got), unix.RWF_NOWAIT)
			if err == unix.EINTR {
				continue
			}
			if err != nil || n <= 0 {
				break
			}
			got += n
		}
		return true
	})
	return got
}
