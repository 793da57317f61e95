//go:build linux

package ctf

import "golang.org/x/sys/unix"

// adviseWillNeed tells the kernel that [off, off+n) of f will be read soon.
func adviseWillNeed(f any, off, n int64) {
	if fd, ok := f.(interface{ Fd() uintptr }); ok {
		unix.Fadvise(int(fd.Fd()), off, n, unix.FADV_WILLNEED)
	}
}
