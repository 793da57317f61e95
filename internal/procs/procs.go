// Package procs says how many goroutines of a process should compute at
// once, when some of the runtime's processors were added for goroutines
// that spend their time blocked in system calls.
//
// A goroutine blocked in a read(2) of a file holds one of the runtime's
// processors (a P, of which there are GOMAXPROCS) until the runtime hands
// it to another thread, and meanwhile runnable goroutines may wait with
// cores idle. Reads around the page cache (internal/direct) block for a
// disk's latency, up to milliseconds per read, on four goroutines; on a
// 2-core machine, a trace of such a read showed parse goroutines runnable
// for a second in all while the cores idled a third of the time. Reserve
// adds processors for the blocking goroutines, and Compute tells the
// parsers how many goroutines to start: the processors there were before
// (more parsers than cores made no read faster and held more memory).
package procs

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
)

var (
	mu       sync.Mutex   // serializes Reserve
	reserved atomic.Int32 // processors added by Reserve
)

// Reserve makes n processors beyond the computing ones available to
// goroutines that block in system calls, by raising GOMAXPROCS. It
// changes nothing when an earlier call reserved n or more, or when the
// GOMAXPROCS environment variable set the number (the user's choice
// stands). Once raised, GOMAXPROCS no longer follows the runtime's own
// updates (to a container's CPU limit that changes) for the rest of the
// process.
func Reserve(n int) {
	mu.Lock()
	defer mu.Unlock()
	r := int(reserved.Load())
	if n <= r || os.Getenv("GOMAXPROCS") != "" {
		return
	}
	runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) - r + n)
	reserved.Store(int32(n))
}

// Compute returns how many goroutines should do CPU work at once:
// GOMAXPROCS less the processors Reserve added, at least 1.
func Compute() int {
	return max(1, runtime.GOMAXPROCS(0)-int(reserved.Load()))
}
