package serve

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// idleTrimDelay is how long the server must have run no Batches call
// before it gives memory back.
const idleTrimDelay = time.Second

// idleTrim gives the memory of a burst of calls back once the server is
// idle. Between calls the Go runtime collects only when something
// allocates, and an idle server allocates nothing: without a collection,
// what the last calls left (their garbage, and the buffers gRPC and the
// readers keep in pools for reuse) stays counted as live heap, and the
// pages stay resident. Once no call has run for idleTrimDelay, it collects
// twice (a sync.Pool is emptied by the second collection after its last
// use) and returns the freed pages to the system (debug.FreeOSMemory).
type idleTrim struct {
	busy  func() bool // whether a call runs or waits
	mu    sync.Mutex
	timer *time.Timer
	done  bool
	trims atomic.Int64 // collections made (tests)
}

func newIdleTrim(busy func() bool) *idleTrim { return &idleTrim{busy: busy} }

// callEnded (re)starts the wait: the trim comes idleTrimDelay after the
// last call ends.
func (t *idleTrim) callEnded() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return
	}
	if t.timer == nil {
		t.timer = time.AfterFunc(idleTrimDelay, t.fire)
		return
	}
	t.timer.Reset(idleTrimDelay)
}

func (t *idleTrim) fire() {
	if t.busy() {
		return // the call running now restarts the wait when it ends
	}
	runtime.GC()
	debug.FreeOSMemory()
	t.trims.Add(1)
}

// stop cancels a trim to come.
func (t *idleTrim) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done = true
	if t.timer != nil {
		t.timer.Stop()
	}
}
