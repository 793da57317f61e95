package model

import "unsafe"

// A worker's row gradients (rowGrads) hold two large arrays per side: the
// row→slot index, one int32 per row of the table (950,000 rows for
// LiveJournal's 3.8 M entities in 4 partitions), and the summed gradients
// of the rows a batch touches (up to ~21,000 rows × d floats with 1000
// uniform negatives). In the Go heap the collector lets them grow to about twice
// their size between collections, and the gradients' array leaves its
// smaller copies behind as append grows it. A mapped worker
// (NewMappedWorker) keeps both in mappings outside the Go heap instead,
// as the trainer's tables are: resident once, the gradients grown in place
// by the kernel (no copy), and given back by Release. The values, and the
// order of every operation on them, are the same either way.

// NewMappedWorker is NewWorker for a worker whose row-gradient arrays are
// mapped outside the Go heap (a plain allocation where the system offers
// no anonymous mappings). The caller must Release it when done: the
// collector never gives that memory back.
func NewMappedWorker(m *Model) *Worker {
	w := NewWorker(m)
	w.gl.mapped, w.gr.mapped = true, true
	return w
}

// Release gives back the worker's arrays sized by the tables it last
// trained (their row→slot indexes and summed gradients) and forgets those
// tables. The worker stays usable: a later batch allocates them again. It
// must not run concurrently with a use of the worker.
func (w *Worker) Release() {
	w.gl.release()
	w.gr.release()
}

// workMapped counts the bytes mapped by workers' arrays (in the Tables
// field, the arrays), with its high-water mark since ResetPeakResident.
var workMapped residency

// WorkerMapped is the bytes the mapped workers' arrays take now, and the
// most they took at once since the last ResetPeakResident: the row→slot
// indexes and the gradients' mappings (of which only the pages written
// are resident).
func WorkerMapped() (now, peak int64) {
	return workMapped.bytes.Load(), workMapped.peakBytes.Load()
}

// mapWork maps n bytes for a worker's array, counted in WorkerMapped.
func mapWork(n int, huge bool) []byte {
	mem := mapBytes(n, huge)
	workMapped.add(1, int64(len(mem)))
	return mem
}

// unmapWork gives back a worker's mapping (nil: nothing).
func unmapWork(mem []byte) {
	if mem != nil {
		workMapped.add(-1, -int64(len(mem)))
		unmapBytes(mem)
	}
}

// release gives back rg's arrays (unmapping a mapped worker's) and leaves
// rg as a new worker's.
func (rg *rowGrads) release() {
	unmapWork(rg.slotMem)
	unmapWork(rg.gMem)
	*rg = rowGrads{mapped: rg.mapped}
}

// makeSlots returns a row→slot index of n rows (to be filled with -1),
// giving back the previous one's mapping.
func (rg *rowGrads) makeSlots(n int) []int32 {
	if !rg.mapped {
		return makeHuge[int32](n)
	}
	unmapWork(rg.slotMem)
	rg.slotMem = nil
	if n == 0 {
		return nil
	}
	rg.slotMem = mapWork(4*n, true)
	return unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(rg.slotMem))), n)
}

// makeGrads returns an empty gradient array with room for n floats.
func (rg *rowGrads) makeGrads(n int) []float32 {
	if !rg.mapped {
		return make([]float32, 0, n)
	}
	unmapWork(rg.gMem)
	rg.gMem = mapWork(4*n, false)
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(rg.gMem))), n)[:0]
}

// appendGrad appends one row's gradient g to rg.g. A mapped array that is
// full doubles in place (remapBytes): only the pages written count in
// resident memory, and no smaller copy is left behind.
func (rg *rowGrads) appendGrad(g []float32) {
	if !rg.mapped {
		rg.g = append(rg.g, g...)
		return
	}
	n := len(rg.g)
	if n+len(g) > cap(rg.g) {
		c := max(2*cap(rg.g), n+len(g))
		old := len(rg.gMem)
		rg.gMem = remapBytes(rg.gMem, 4*c)
		workMapped.add(0, int64(len(rg.gMem)-old))
		rg.g = unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(rg.gMem))), c)[:n]
	}
	rg.g = rg.g[:n+len(g)]
	copy(rg.g[n:], g)
}
