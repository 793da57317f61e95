package source

// Headroom is what the memory bound of a read allows beyond the window: the
// peak heap of a read should stay under ResidentChunks() x chunk bytes +
// Headroom (docs/source.md, "Memory").
const Headroom = 64 << 20

// MemoryLimit returns the soft heap limit (for debug.SetMemoryLimit) that
// keeps a read within its bound: windowBytes + Headroom, where windowBytes is
// ResidentChunks() times the corpus's chunk size. heapBefore is the heap in
// use before reading (the corpus index, which grows with the corpus, not the
// window). When the index is so large that the bound would leave less than
// a quarter of the headroom above the live data, the limit is raised to
// heapBefore + windowBytes + Headroom/4: a soft limit far below the live heap
// only makes the collector run without freeing anything.
func MemoryLimit(heapBefore, windowBytes int64) int64 {
	limit := windowBytes + Headroom
	return max(limit, heapBefore+windowBytes+Headroom/4)
}
