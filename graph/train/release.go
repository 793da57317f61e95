package train

import (
	"runtime"
	"runtime/debug"

	"github.com/batchprep/batchprep/graph/train/model"
)

// releaseTables runs before each bucket is loaded, once swapIn has
// released the partitions it dropped (their memory, mapped outside the Go
// heap, went back to the system at once): it makes the last bucket's
// edges reusable before the next ones are allocated. When partitions were
// dropped, the workers are renewed first (they hold no state between
// batches, but their gradient slots point at the last tables they
// updated, which are now empty). Without the collection the Go heap would
// grow by the last chunk's edges (its collector waits for the heap to
// double). The collection is cheap: edges are pointer-free arrays, which
// the collector does not scan.
func (t *Trainer) releaseTables(dropped bool) {
	if !dropped {
		runtime.GC()
		return
	}
	for w := range t.workers {
		t.workers[w] = model.NewWorker(t.m)
	}
	// Collect and hand the freed pages back to the system at once: they
	// would otherwise stay resident until the runtime returns them,
	// minutes later.
	debug.FreeOSMemory()
}

// releaseBehind gives back the memory of a checkpoint's partitions written
// behind, once the writer is done with them (written, or failed: the run
// then stops): they are out of the trainer's tables (W3), and a later load
// of one reads its file (W4).
func (p *pendingCheckpoint) releaseBehind() {
	for _, tab := range p.behind {
		tab.Release()
	}
}

// releaseAll gives back every table a run still holds, when Run returns
// (the checkpoint holds them; a Run after it loads them again).
func (t *Trainer) releaseAll() {
	for k, tab := range t.tables {
		if !t.dirty[k] {
			tab.Release()
			delete(t.tables, k)
		}
	}
}
