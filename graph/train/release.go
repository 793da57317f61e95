package train

import (
	"runtime"
	"runtime/debug"
)

// releaseTables runs before each bucket is loaded, once swapIn has
// released the partitions it dropped (their memory, mapped outside the Go
// heap, went back to the system at once): it makes the last bucket's
// edges reusable before the next ones are allocated. When partitions were
// dropped, the workers' arrays sized by the last tables (row→slot indexes
// and summed gradients, mapped outside the Go heap) are given back first:
// workers hold no state between batches, and the next bucket's first
// batch maps them again for its tables. Without the collection the Go
// heap would grow by the last chunk's edges (its collector waits for the
// heap to double). The collection is cheap: edges are pointer-free arrays, which
// the collector does not scan.
func (t *Trainer) releaseTables(dropped bool) {
	if !dropped {
		runtime.GC()
		return
	}
	t.releaseWorkers()
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

// releaseWorkers gives back the workers' mapped arrays; they map them
// again when next used.
func (t *Trainer) releaseWorkers() {
	for _, w := range t.workers {
		w.Release()
	}
}

// releaseAll gives back every table a run still holds, and the workers'
// arrays, when Run returns (the checkpoint holds the tables; a Run after
// it loads them again).
func (t *Trainer) releaseAll() {
	t.releaseWorkers()
	for k, tab := range t.tables {
		if !t.dirty[k] {
			tab.Release()
			delete(t.tables, k)
		}
	}
}
