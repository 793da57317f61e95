package train

import (
	"runtime"

	"github.com/batchprep/batchprep/graph/train/model"
)

// releaseTables makes the memory of the partitions just dropped reusable
// before the next ones are allocated. The workers are renewed first (they
// hold no state between batches, but their gradient slots point at the
// last tables they updated); then a collection frees the partitions.
// Without it, the Go heap would grow by the dropped partitions (its
// collector waits for the heap to double), and the peak would hold up to
// twice the bucket's partitions. The collection is cheap: partitions are
// pointer-free arrays, which the collector does not scan.
func (t *Trainer) releaseTables() {
	for w := range t.workers {
		t.workers[w] = model.NewWorker(t.m)
	}
	runtime.GC()
}
