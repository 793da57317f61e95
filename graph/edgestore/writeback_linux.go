package edgestore

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing f's dirty pages to disk
// without waiting (sync_file_range with SYNC_FILE_RANGE_WRITE), so that
// the writeback of a bucket file overlaps the writing of the next ones and
// Commit's fsync finds little left to do. Durability still comes from that
// fsync; an error here only means the kernel will write the pages later.
func startWriteback(f *os.File) {
	unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
}
