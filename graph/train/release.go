package train

import (
	"runtime"
	"runtime/debug"

	"github.com/batchprep/batchprep/graph/train/model"
)

// releaseTables runs before each bucket is loaded: it makes the memory of
// the partitions just dropped (dropped is set) and of the last bucket's
// edges reusable before the next ones are allocated. When partitions were
// dropped, the workers are renewed first (they hold no state between
// batches, but their gradient slots point at the last tables they
// updated). Without it, the Go heap would grow by the dropped partitions
// and the last chunk's edges (its collector waits for the heap to
// double), up to twice the bucket's memory. The collection is cheap:
// partitions and edges are pointer-free arrays, which the collector does
// not scan.
func (t *Trainer) releaseTables(dropped bool) {
	if !dropped {
		runtime.GC()
		return
	}
	for w := range t.workers {
		t.workers[w] = model.NewWorker(t.m)
	}
	// Collect and hand the freed pages back to the system at once: the
	// next partition may not fit in the hole the dropped one left (the
	// last bucket's edges took part of it), and the freed pages would
	// otherwise stay resident until the runtime returns them, minutes
	// later.
	debug.FreeOSMemory()
}
